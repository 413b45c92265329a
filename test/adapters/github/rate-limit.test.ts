/**
 * Until when GitHub's own rate-limit answers say to wait, read from what the double answers
 * as GitHub does: a secondary limit's `retry-after`, the GraphQL `RATE_LIMIT` error (HTTP 200)
 * with its `x-ratelimit-reset`, a REST primary limit; anything else is no rate limit.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createOctokit } from '../../../src/adapters/github/client.js';
import { GitHubRepo } from '../../../src/adapters/github/repo.js';
import { rateLimitedUntil } from '../../../src/adapters/github/rate-limit.js';
import { readEpicView } from '../../../src/adapters/github/epic-view.js';
import { startGitHubDouble, type GitHubDouble } from '../../github-double/index.js';

const OWNER = 'acme';
const REPO = 'shop';

let gh: GitHubDouble | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
});

async function world(limits: Parameters<typeof startGitHubDouble>[0]): Promise<{
  gh: GitHubDouble;
  repo: GitHubRepo;
}> {
  gh = await startGitHubDouble(limits);
  const app = gh.seed.app({});
  const bot = gh.seed.user({ login: app.botLogin, type: 'Bot', permission: 'admin' });
  await gh.seed.repo({ owner: OWNER, name: REPO });
  const repo = new GitHubRepo({
    owner: OWNER,
    repo: REPO,
    botLogin: app.botLogin,
    octokit: createOctokit({ baseUrl: gh.url, token: bot.token, production: false }),
  });
  return { gh, repo };
}

const view = (repo: GitHubRepo) =>
  readEpicView(repo, {
    stateBranch: 'epicflow/state',
    folder: 'epics/1',
    epicBranch: 'epic/1',
    baseBranch: 'main',
    epic: 1,
    configPath: '.github/epicflow.yml',
  });

describe('rateLimitedUntil', () => {
  it('a secondary limit: now plus retry-after', async () => {
    const { gh, repo } = await world({ clock: { mode: 'manual' } });
    gh.faults.add({
      route: 'graphql:EpicflowEpicView',
      kind: 'secondary-rate-limit',
      retryAfterSeconds: 90,
    });
    const e = await view(repo).catch((x: unknown) => x);
    const now = gh.clock.now();
    expect(rateLimitedUntil(e, now)).toBe(now + 90_000);
  });

  it('the GraphQL points spent: the reset GitHub names', async () => {
    const { gh, repo } = await world({
      limits: { graphql: { perHour: 1 } },
      clock: { mode: 'manual' },
    });
    await view(repo);
    const e = await view(repo).catch((x: unknown) => x);
    const now = gh.clock.now();
    const until = rateLimitedUntil(e, now);
    expect(until).toBeDefined();
    // The hour's window started at the first query: it resets about an hour later, on a second.
    expect(until ?? 0).toBeGreaterThan(now);
    expect(until ?? 0).toBeLessThanOrEqual(now + 3_601_000);
    expect((until ?? 0) % 1000).toBe(0);
  });

  it('not a rate limit: a refusal, a 5xx, our own error', async () => {
    const { gh, repo } = await world({ clock: { mode: 'manual' } });
    gh.faults.add({ route: 'graphql:EpicflowEpicView', status: 502 });
    const e = await view(repo).catch((x: unknown) => x);
    expect(rateLimitedUntil(e, gh.clock.now())).toBeUndefined();
    const missing = await repo.getIssue(999).catch((x: unknown) => x);
    expect(rateLimitedUntil(missing, gh.clock.now())).toBeUndefined();
    expect(rateLimitedUntil(new Error('rate limit'), gh.clock.now())).toBeUndefined();
  });
});
