import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ProjectBoard } from '../../../src/adapters/github/board.js';
import { createOctokit, USER_AGENT } from '../../../src/adapters/github/client.js';
import { GitHubStateStore } from '../../../src/adapters/github/state-store.js';
import { describeError } from '../../../src/core/errors.js';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;

beforeAll(async () => {
  w = await startWorld();
  w.gh.seed.user({ login: 'alice', permission: 'write' });
});
afterEach(() => {
  w.gh.faults.clear();
});
afterAll(() => w.gh.close());

describe('createOctokit', () => {
  it('sends epicflow/<version> as its user agent', () => {
    const octokit = createOctokit({ baseUrl: w.gh.url, token: 't', production: false });
    expect(USER_AGENT).toMatch(/^epicflow\/\d+\.\d+\.\d+/);
    expect(String(octokit.request.endpoint.DEFAULTS.headers['user-agent'])).toMatch(
      new RegExp(`^${USER_AGENT.replace(/[.]/g, '\\.')}`),
    );
  });

  it('in tests, surfaces a 502 at once as a github error', async () => {
    w.gh.faults.add({ route: 'repos/get-collaborator-permission-level', status: 502 });
    const err = await w.repo.permissionOf('alice').catch((e: unknown) => e);
    expect(describeError(err)).toBe(
      'GitHub: cannot read the permission of alice on acme/shop ' +
        '(HTTP 502: github-double injected fault (502))',
    );
  });

  it('in production, retries a 502 on REST and GraphQL and succeeds', async () => {
    const prod = w.repoAs(w.bot.token, true);
    const before = w.gh.stats.rest['repos/get-collaborator-permission-level'] ?? 0;
    w.gh.faults.add({ route: 'repos/get-collaborator-permission-level', status: 502 });
    expect(await prod.permissionOf('alice')).toBe('write');
    expect(w.gh.stats.rest['repos/get-collaborator-permission-level']).toBe(before + 2);

    w.gh.seed.project({ owner: OWNER, number: 5 });
    w.gh.faults.add({ route: 'graphql:EpicflowBoard', status: 502 });
    const board = await ProjectBoard.open(prod.octokit, 'https://github.com/orgs/acme/projects/5');
    expect(board.projectId).toBe(w.gh.state.project(OWNER, 5)?.id);
  });

  it('in production, a lost compare-and-swap (409) is one request: no retry of the stale write', async () => {
    const prod = w.repoAs(w.bot.token, true);
    const store = new GitHubStateStore({ repo: prod, epic: '77' });
    const first = await store.writeTextIfChanged('report.md', '# one\n', null);
    expect(first.written).toBe(true);
    const before = w.gh.stats.rest['repos/create-or-update-file-contents'] ?? 0;
    const conflicts = w.gh.stats.statuses[409] ?? 0;
    // A writer that read before `first`: its sha is stale (none), GitHub answers 409 or 422.
    const stale = await store.write(
      {
        version: 1,
        epic: '77',
        story: 'a',
        planHash: 'h',
        status: 'planned',
        branch: 'story/77/a',
        attempt: 1,
        executors: [],
        usage: [],
        notes: [],
        timings: {},
      },
      'f'.repeat(40),
    );
    expect(stale).toEqual({ ok: false, conflict: true });
    expect(w.gh.stats.rest['repos/create-or-update-file-contents']).toBe(before + 1);
    expect((w.gh.stats.statuses[409] ?? 0) - conflicts).toBe(1);
    // A raw client of the Action's kind does not retry a 409 either.
    const raw = createOctokit({ baseUrl: w.gh.url, token: w.bot.token, production: true });
    const again = await raw.rest.repos
      .createOrUpdateFileContents({
        owner: OWNER,
        repo: REPO,
        path: 'epics/77/report.md',
        branch: 'epicflow/state',
        message: 'stale',
        content: Buffer.from('x').toString('base64'),
        sha: 'f'.repeat(40),
      })
      .catch((e: unknown) => e);
    expect((again as { status?: number }).status).toBe(409);
    expect(w.gh.stats.rest['repos/create-or-update-file-contents']).toBe(before + 2);
  });

  it('in production, waits out a secondary rate limit on a comment and posts it once', async () => {
    const prod = w.repoAs(w.bot.token, true);
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: limited' });
    w.gh.faults.add({
      route: 'issues/create-comment',
      kind: 'secondary-rate-limit',
      retryAfterSeconds: 1,
    });
    const r = await prod.ensureComment({ issueNumber: issue.number, marker: 'status', body: 'ok' });
    expect(r.action).toBe('created');
    expect(w.gh.state.comments(OWNER, REPO, issue.number)).toHaveLength(1);
  });
});
