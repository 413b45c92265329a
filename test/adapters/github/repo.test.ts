import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildMergeMessage } from '../../../src/core/merge-message.js';
import { describeError, EpicflowError } from '../../../src/core/errors.js';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;

beforeAll(async () => {
  w = await startWorld({ '.github/epicflow.yml': 'board: {}\n' });
});
afterAll(() => w.gh.close());

describe('branches and files', () => {
  it('ensures a branch with a slash once and reads its sha', async () => {
    const main = await w.gh.state.ref(OWNER, REPO, 'main');
    expect(main).toBeDefined();
    expect(await w.repo.getBranchSha('epic/12')).toBeNull();
    const first = await w.repo.ensureBranch('epic/12', main ?? '');
    const second = await w.repo.ensureBranch('epic/12', main ?? '');
    expect(first).toEqual({ sha: main, action: 'created' });
    expect(second).toEqual({ sha: main, action: 'unchanged' });
    expect(await w.repo.getBranchSha('epic/12')).toBe(main);
    expect(await w.gh.state.ref(OWNER, REPO, 'epic/12')).toBe(main);
  });

  it('reads the config on the default branch, and null when a file is missing', async () => {
    expect(await w.repo.loadConfigText()).toBe('board: {}\n');
    expect(await w.repo.readFile('main', 'nope.txt')).toBeNull();
    expect(await w.repo.readFile('main', 'README.md')).toBe('# shop\n');
  });
});

describe('permissions', () => {
  it('reports exact roles', async () => {
    const roles = ['admin', 'maintain', 'write', 'triage', 'read'] as const;
    for (const role of roles) {
      w.gh.seed.user({ login: `u-${role}`, permission: 'read' });
      w.gh.seed.permission({ owner: OWNER, repo: REPO, login: `u-${role}`, permission: role });
    }
    const got = await Promise.all(roles.map((r) => w.repo.permissionOf(`u-${r}`)));
    expect(got).toEqual([...roles]);
    expect(await w.repo.permissionOf('nobody-at-all')).toBe('none');
  });
});

describe('ensureComment', () => {
  it('creates, then leaves unchanged, then updates one comment in place', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: status' });
    const n = issue.number;
    const a = await w.repo.ensureComment({ issueNumber: n, marker: 'status', body: 'one' });
    const b = await w.repo.ensureComment({ issueNumber: n, marker: 'status', body: 'one' });
    const c = await w.repo.ensureComment({ issueNumber: n, marker: 'status', body: 'two' });
    expect([a.action, b.action, c.action]).toEqual(['created', 'unchanged', 'updated']);
    expect(new Set([a.id, b.id, c.id]).size).toBe(1);
    const comments = w.gh.state.comments(OWNER, REPO, n);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body).toBe('two\n\n<!-- epicflow:status -->');
    expect(comments[0]?.author).toBe(w.bot.login);
  });

  it("ignores another user's comment carrying the same marker", async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: hijack' });
    w.gh.seed.user({ login: 'mallory', permission: 'write' });
    w.gh.act.comment('mallory', {
      owner: OWNER,
      repo: REPO,
      number: issue.number,
      body: 'fake status\n\n<!-- epicflow:status -->',
    });
    const r = await w.repo.ensureComment({
      issueNumber: issue.number,
      marker: 'status',
      body: 'real',
    });
    expect(r.action).toBe('created');
    const comments = w.gh.state.comments(OWNER, REPO, issue.number);
    expect(comments.map((c) => [c.author, c.body.split('\n')[0]])).toEqual([
      ['mallory', 'fake status'],
      [w.bot.login, 'real'],
    ]);
  });

  it('finds its comment beyond the first 100 comments', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: busy' });
    w.gh.seed.user({ login: 'chatty', permission: 'write' });
    for (let i = 0; i < 120; i++) {
      w.gh.act.comment('chatty', { owner: OWNER, repo: REPO, number: issue.number, body: `c${i}` });
    }
    const first = await w.repo.ensureComment({
      issueNumber: issue.number,
      marker: 'report',
      body: 'r1',
    });
    const again = await w.repo.ensureComment({
      issueNumber: issue.number,
      marker: 'report',
      body: 'r2',
    });
    expect(first.action).toBe('created');
    expect(again).toEqual({ id: first.id, action: 'updated' });
    expect(w.gh.state.comments(OWNER, REPO, issue.number)).toHaveLength(121);
  });

  it('truncates a body over 65,536 characters and links the full text', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: huge' });
    const huge = 'x'.repeat(70_000);
    const r = await w.repo.ensureComment({
      issueNumber: issue.number,
      marker: 'report',
      body: huge,
      fullTextUrl: 'https://example.com/run/1',
    });
    const again = await w.repo.ensureComment({
      issueNumber: issue.number,
      marker: 'report',
      body: huge,
      fullTextUrl: 'https://example.com/run/1',
    });
    expect(again).toEqual({ id: r.id, action: 'unchanged' });
    const body = w.gh.state.comments(OWNER, REPO, issue.number)[0]?.body ?? '';
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body).toMatch(
      /… truncated: \d+ characters omitted .* Full text: https:\/\/example\.com\/run\/1/,
    );
    expect(body.endsWith('<!-- epicflow:report -->')).toBe(true);
  });

  it('names the missing App permission when GitHub refuses', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: denied' });
    const reader = w.gh.seed.user({ login: 'rita', permission: 'read' });
    const err = await w
      .repoAs(reader.token)
      .ensureComment({ issueNumber: issue.number, marker: 'status', body: 'x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EpicflowError);
    expect(describeError(err)).toBe(
      `GitHub: cannot create the status comment on acme/shop#${issue.number} ` +
        '(HTTP 403: Resource not accessible by integration)\n' +
        '  the token probably lacks the GitHub App permission "Issues: read and write" ' +
        '(or the App is not installed for this repository or organization)',
    );
  });
});

describe('sub-issues', () => {
  it('creates one sub-issue per story, never twice, and keeps it current', async () => {
    const epic = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: sub' });
    const input = {
      parent: epic.number,
      storyId: 'health',
      title: 'Add health',
      body: 'Serve it.',
    };
    const a = await w.repo.ensureSubIssue(input);
    const b = await w.repo.ensureSubIssue(input);
    const c = await w.repo.ensureSubIssue({ ...input, title: 'Add a health endpoint' });
    expect([a.action, b.action, c.action]).toEqual(['created', 'unchanged', 'updated']);
    expect(new Set([a.number, b.number, c.number]).size).toBe(1);
    const subs = await w.repo.listSubIssues(epic.number);
    expect(subs.map((s) => [s.number, s.title])).toEqual([[a.number, 'Add a health endpoint']]);
    expect(subs[0]?.body).toBe(
      'Serve it.\n\n<!-- epicflow:story:health -->\n<!-- epicflow:epic:' + epic.number + ' -->',
    );
    expect(await w.repo.closeIssue(a.number)).toBe(true);
    expect(await w.repo.closeIssue(a.number)).toBe(false);
    expect(w.gh.state.issue(OWNER, REPO, a.number)?.state).toBe('closed');
    expect(await w.repo.reopenIssue(a.number)).toBe(true);
    expect(w.gh.state.issue(OWNER, REPO, a.number)?.state).toBe('open');
  });

  it('links an issue it created whose sub-issue link was lost, instead of duplicating it', async () => {
    const epic = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: crash' });
    w.gh.faults.add({ route: 'issues/add-sub-issue', status: 502 });
    const input = { parent: epic.number, storyId: 'api', title: 'API', body: 'Build it.' };
    await expect(w.repo.ensureSubIssue(input)).rejects.toThrow(/HTTP 502/);
    const again = await w.repo.ensureSubIssue(input);
    expect(again.action).toBe('linked');
    const created = w.gh.state
      .issues(OWNER, REPO)
      .filter((i) => (i.body ?? '').includes('<!-- epicflow:story:api -->'));
    expect(created.map((i) => i.number)).toEqual([again.number]);
    expect((await w.repo.listSubIssues(epic.number)).map((s) => s.number)).toEqual([again.number]);
  });

  it('lists blocked-by relations between sub-issues', async () => {
    const epic = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: deps' });
    const a = await w.repo.ensureSubIssue({
      parent: epic.number,
      storyId: 'a',
      title: 'A',
      body: 'a',
    });
    const b = await w.repo.ensureSubIssue({
      parent: epic.number,
      storyId: 'b',
      title: 'B',
      body: 'b',
    });
    await w.repo.octokit.rest.issues.addBlockedByDependency({
      owner: OWNER,
      repo: REPO,
      issue_number: b.number,
      issue_id: a.id,
    });
    expect((await w.repo.blockedBy(b.number)).map((i) => i.number)).toEqual([a.number]);
    expect(await w.repo.blockedBy(a.number)).toEqual([]);
  });
});

describe('the epic pull request', () => {
  it('ensures one draft PR by head branch, then marks it ready once', async () => {
    const main = (await w.gh.state.ref(OWNER, REPO, 'main')) ?? '';
    await w.repo.ensureBranch('epic/40', main);
    const input = { head: 'epic/40', base: 'main', title: 'Epic #40: Checkout', body: 'report' };
    expect(await w.repo.ensureDraftPr(input)).toEqual({ action: 'no-commits' });
    // A story merges into the epic branch.
    await w.repo.octokit.rest.repos.createOrUpdateFileContents({
      owner: OWNER,
      repo: REPO,
      path: 'src/a.ts',
      branch: 'epic/40',
      message: 'story a',
      content: Buffer.from('export const a = 1;\n').toString('base64'),
    });
    const a = await w.repo.ensureDraftPr(input);
    const b = await w.repo.ensureDraftPr(input);
    expect(a).toMatchObject({ action: 'created', draft: true });
    expect(b).toMatchObject({ action: 'unchanged', draft: true });
    if (a.action === 'no-commits' || b.action === 'no-commits') throw new Error('no PR');
    expect(b.number).toBe(a.number);
    const c = await w.repo.ensureDraftPr({ ...input, title: 'Epic #40: Checkout v2' });
    expect(c).toMatchObject({ action: 'updated', number: a.number });
    expect(w.gh.state.issues(OWNER, REPO).filter((i) => i.pull?.head === 'epic/40')).toHaveLength(
      1,
    );
    expect(await w.repo.markReadyForReview(a.number)).toBe(true);
    expect(await w.repo.markReadyForReview(a.number)).toBe(false);
    expect(w.gh.state.issue(OWNER, REPO, a.number)?.pull?.draft).toBe(false);
  });
});

describe('dispatchWorkflow', () => {
  it('dispatches with ids only and returns the run', async () => {
    // Dispatched as a person: the double's workflow_run payload builds the commit email from
    // the login, which is not a valid email for `epicflow[bot]` (reported to its owner).
    const alice = w.gh.seed.user({ login: 'alice', permission: 'write' });
    const r = await w.repoAs(alice.token).dispatchWorkflow({
      workflow: 'epicflow-story.yml',
      ref: 'main',
      inputs: { epic: '12', story: 'health-endpoint', attempt: 2 },
    });
    const dispatches = w.gh.state.dispatches(OWNER, REPO);
    const last = dispatches[dispatches.length - 1];
    expect(last?.inputs).toEqual({ epic: '12', story: 'health-endpoint', attempt: '2' });
    expect(last?.workflowPath).toBe('.github/workflows/epicflow-story.yml');
    expect(r.runId).toBe(last?.runId);
    expect(r.runUrl).toMatch(new RegExp(`/acme/shop/actions/runs/${String(r.runId)}$`));
  });

  it('refuses a non-id input before any request', async () => {
    const before = w.gh.stats.requests;
    const err = await w.repo
      .dispatchWorkflow({
        workflow: 'epicflow-story.yml',
        ref: 'main',
        inputs: { epic: '12', story: 'x"; rm -rf / #' },
      })
      .catch((e: unknown) => e);
    expect(describeError(err)).toBe(
      'refusing to dispatch epicflow-story.yml: input "story" must be an id matching ' +
        '^[A-Za-z0-9._-]{1,100}$ (issue text never goes into dispatch inputs)',
    );
    expect(w.gh.stats.requests).toBe(before);
  });
});

describe('mergedStories', () => {
  async function commitOn(branch: string, path: string): Promise<void> {
    await w.repo.octokit.rest.repos.createOrUpdateFileContents({
      owner: OWNER,
      repo: REPO,
      path,
      branch,
      message: `add ${path}`,
      content: Buffer.from(`${path}\n`).toString('base64'),
    });
  }

  async function mergeStory(epic: string, story: string, title: string): Promise<string> {
    const merged = await w.repo.octokit.rest.repos.merge({
      owner: OWNER,
      repo: REPO,
      base: `epic/${epic}`,
      head: `story/${epic}/${story}`,
      commit_message: buildMergeMessage({ story, title, chain: ['codex', 'claude'] }),
    });
    return merged.data.sha;
  }

  it('reads story merges from the first-parent history of the epic branch', async () => {
    const main = (await w.gh.state.ref(OWNER, REPO, 'main')) ?? '';
    expect(await w.repo.mergedStories('epic/50')).toEqual(new Map());
    await w.repo.ensureBranch('epic/50', main);
    for (const story of ['api', 'ui']) {
      await w.repo.ensureBranch(`story/50/${story}`, main);
      await commitOn(`story/50/${story}`, `src/${story}.ts`);
    }
    // A merge inside a story branch is not on the first-parent line and does not count.
    await w.repo.ensureBranch('story/50/helper', main);
    await commitOn('story/50/helper', 'src/helper.ts');
    await w.repo.octokit.rest.repos.merge({
      owner: OWNER,
      repo: REPO,
      base: 'story/50/ui',
      head: 'story/50/helper',
      commit_message: buildMergeMessage({ story: 'helper', title: 'Helper', chain: ['codex'] }),
    });
    const api = await mergeStory('50', 'api', 'Add the API');
    const ui = await mergeStory('50', 'ui', 'Add the UI');
    expect(await w.repo.mergedStories('epic/50')).toEqual(
      new Map([
        ['ui', ui],
        ['api', api],
      ]),
    );
    expect(await w.repo.mergedStories('epic/50', { base: main })).toEqual(
      new Map([
        ['ui', ui],
        ['api', api],
      ]),
    );
  });
});
