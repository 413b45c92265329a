/**
 * Bad input the App must answer clearly, leaving nothing half-created: a board
 * project that does not exist, an App permission that is missing, commands on
 * issues and pull requests that are not epics, and plans whose text is far
 * longer than a GitHub body may be.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { octokitFor } from '../github-double/client.js';
import {
  botComments,
  dispatched,
  failStory,
  OWNER,
  planBody,
  readRecord,
  REPO,
  say,
  startApp,
  startEpic,
  APP_CONFIG,
  writeConfig,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
  w.gh.seed.user({ login: 'rita', permission: 'read' });
});
afterEach(() => {
  w.gh.faults.clear();
});
afterAll(() => w.close());

const TWO = [{ id: 'api' }, { id: 'ui', dependsOn: ['api'] }];
const FORBIDDEN = 'Resource not accessible by integration';
const BOARD = (n: number): string => `https://github.com/orgs/${OWNER}/projects/${n}`;

/** What epicflow left on GitHub for an epic: its branch, pull request, sub-issues and runs. */
async function footprint(epic: number): Promise<{
  branch: boolean;
  pulls: number;
  subIssues: number;
  dispatched: string[];
}> {
  const pulls = w.gh.state
    .issues(OWNER, REPO)
    .filter((i) => i.pull !== undefined && i.title.startsWith(`Epic #${epic}:`));
  return {
    branch: (await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)) !== undefined,
    pulls: pulls.length,
    subIssues: w.gh.state.issue(OWNER, REPO, epic)?.subIssueIds.length ?? -1,
    dispatched: dispatched(w.gh, epic),
  };
}

/** Redelivers the last delivery of an event (GitHub's "Redeliver" button). */
async function redeliverLast(event: string): Promise<void> {
  const last = [...w.gh.deliveries].reverse().find((d) => d.event === event);
  if (last === undefined) throw new Error(`no ${event} delivery`);
  await w.gh.redeliver(last.id);
  await w.gh.idle();
}

describe('a board project that does not exist', () => {
  it('gets one comment naming board.project and the URL, creates nothing, and starts on /resume once the project exists', async () => {
    w.expectError('config');
    await writeConfig(
      w,
      `${APP_CONFIG}labels: { epic: epic }\nboard: { project: "${BOARD(9)}" }\n`,
    );
    try {
      const epic = await startEpic(w, 'Missing board', planBody(TWO));
      const [comment, ...others] = botComments(w, epic);
      expect(others).toEqual([]);
      expect(comment).toContain('**epicflow stopped');
      expect(comment).toContain('board.project in .github/epicflow.yml');
      expect(comment).toContain(BOARD(9));
      expect(comment).toContain('comment `/resume`');
      expect(await footprint(epic)).toEqual({
        branch: false,
        pulls: 0,
        subIssues: 0,
        dispatched: [],
      });

      // Redelivered, and labelled again: still one comment, still nothing created.
      await redeliverLast('issues');
      w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
      await w.gh.idle();
      expect(botComments(w, epic)).toEqual([comment]);
      expect((await footprint(epic)).branch).toBe(false);

      w.gh.seed.project({ owner: OWNER, number: 9, title: 'Epics' });
      await say(w, epic, '/resume');
      expect(await footprint(epic)).toEqual({
        branch: true,
        pulls: 1,
        subIssues: 2,
        dispatched: ['api#1'],
      });
      expect(w.gh.state.project(OWNER, 9)?.items).toHaveLength(2);
      const after = botComments(w, epic);
      expect(after).toHaveLength(2);
      expect(after[0]).toContain('~~epicflow had stopped on this epic.~~ Resolved');
      expect(after[1]).toContain(`epicflow · epic #${epic}`);
    } finally {
      await writeConfig(w, `${APP_CONFIG}labels: { epic: epic }\n`);
    }
  });
});

describe('a missing App permission', () => {
  it('without Actions write: names the permission, runs nothing, and dispatches once after /resume', async () => {
    w.expectError('github');
    w.gh.faults.add({
      route: 'actions/create-workflow-dispatch',
      status: 403,
      message: FORBIDDEN,
      times: 100,
    });
    const epic = await startEpic(w, 'No actions', planBody(TWO));
    const comments = botComments(w, epic);
    expect(comments).toHaveLength(1);
    expect(comments[0]).toContain('The App lacks the permission **Actions: read and write**');
    expect(comments[0]).toContain(
      'the token probably lacks the GitHub App permission "Actions: read and write"',
    );
    expect(dispatched(w.gh, epic)).toEqual([]);
    // The refused start is undone: the story is not shown as running.
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'planned', attempt: 1 });

    // Still missing: the same comment, edited in place.
    await say(w, epic, '/resume');
    expect(botComments(w, epic)).toEqual(comments);

    w.gh.faults.clear();
    await say(w, epic, '/resume');
    expect(dispatched(w.gh, epic)).toEqual(['api#1']);
    await redeliverLast('issue_comment');
    await say(w, epic, '/resume');
    expect(dispatched(w.gh, epic)).toEqual(['api#1']);
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active', attempt: 1 });
    expect(botComments(w, epic)[0]).toContain('Resolved: it goes on again.');
  });

  it('without Organization projects write: names the permission and creates nothing until it is granted', async () => {
    w.expectError('github');
    w.gh.seed.project({ owner: OWNER, number: 3, title: 'Board' });
    await writeConfig(
      w,
      `${APP_CONFIG}labels: { epic: epic }\nboard: { project: "${BOARD(3)}" }\n`,
    );
    try {
      w.gh.faults.add({
        route: 'graphql:EpicflowBoard',
        status: 403,
        message: FORBIDDEN,
        times: 100,
      });
      const epic = await startEpic(w, 'No projects', planBody(TWO));
      const comments = botComments(w, epic);
      expect(comments).toHaveLength(1);
      expect(comments[0]).toContain('**Organization projects: read and write**');
      expect(comments[0]).toContain(BOARD(3));
      expect(await footprint(epic)).toEqual({
        branch: false,
        pulls: 0,
        subIssues: 0,
        dispatched: [],
      });

      w.gh.faults.clear();
      await say(w, epic, '/resume');
      await say(w, epic, '/resume');
      expect(await footprint(epic)).toEqual({
        branch: true,
        pulls: 1,
        subIssues: 2,
        dispatched: ['api#1'],
      });
    } finally {
      await writeConfig(w, `${APP_CONFIG}labels: { epic: epic }\n`);
    }
  });

  it('without Issues write: the failure is only logged, and commenting it is tried once', async () => {
    w.expectError('github');
    w.gh.faults.add({
      route: 'actions/create-workflow-dispatch',
      status: 403,
      message: FORBIDDEN,
      times: 100,
    });
    w.gh.faults.add({
      route: 'issues/create-comment',
      status: 403,
      message: FORBIDDEN,
      times: 100,
    });
    const before = w.gh.stats.rest['issues/create-comment'] ?? 0;
    const logged = w.log.length;
    const epic = await startEpic(w, 'No issues', planBody(TWO));
    expect(botComments(w, epic)).toEqual([]);
    // Only the log tells: the delivery failed, naming the dispatch GitHub refused.
    const errors = w.log.slice(logged).filter((e) => e.level >= 50);
    expect(errors.map((e) => [e.event, e.tag, e.msg])).toEqual([
      ['issues.labeled', 'github', expect.stringContaining('cannot dispatch epicflow-story.yml')],
    ]);
    expect((w.gh.stats.rest['issues/create-comment'] ?? 0) - before).toBe(1);
    expect(dispatched(w.gh, epic)).toEqual([]);
  });
});

describe('a story workflow that is not there', () => {
  it('names the file, starts nothing, and starts once on /resume after it is added', async () => {
    w.expectError('config');
    const octokit = octokitFor(w.gh, w.alice.token);
    const base = { owner: OWNER, repo: REPO };
    const path = '.github/workflows/epicflow-story.yml';
    /** Commits main's tree with the workflow file (`null`: without it), as a whole new tree. */
    const commitWorkflow = async (content: string | null, message: string): Promise<void> => {
      const head = (await w.gh.state.ref(OWNER, REPO, 'main')) ?? '';
      const { data: commit } = await octokit.rest.git.getCommit({ ...base, commit_sha: head });
      const { data: current } = await octokit.rest.git.getTree({
        ...base,
        tree_sha: commit.tree.sha,
        recursive: 'true',
      });
      const kept = current.tree.flatMap((e) =>
        e.type === 'blob' && e.path !== path && e.sha !== undefined && e.path !== undefined
          ? [{ path: e.path, mode: '100644' as const, type: 'blob' as const, sha: e.sha }]
          : [],
      );
      const added =
        content === null ? [] : [{ path, mode: '100644' as const, type: 'blob' as const, content }];
      const { data: tree } = await octokit.rest.git.createTree({
        ...base,
        tree: [...kept, ...added],
      });
      const { data: next } = await octokit.rest.git.createCommit({
        ...base,
        message,
        tree: tree.sha,
        parents: [head],
      });
      await octokit.rest.git.updateRef({ ...base, ref: 'heads/main', sha: next.sha });
    };
    const workflow = (await w.gh.state.file(OWNER, REPO, 'main', path)) ?? '';
    await commitWorkflow(null, 'Remove the story workflow');
    let restored = false;
    const restore = async (): Promise<void> => {
      if (restored) return;
      restored = true;
      await commitWorkflow(workflow, 'Add the story workflow again');
    };
    try {
      const epic = await startEpic(w, 'No workflow', planBody(TWO));
      const comments = botComments(w, epic);
      expect(comments).toHaveLength(1);
      expect(comments[0]).toContain(`the story workflow ${path} was not found on main`);
      expect(dispatched(w.gh, epic)).toEqual([]);
      expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'planned', attempt: 1 });

      await restore();
      await say(w, epic, '/resume');
      expect(dispatched(w.gh, epic)).toEqual(['api#1']);
    } finally {
      await restore();
    }
  });
});

describe('commands on what is not an epic', () => {
  it('answers a writer once on a plain issue, /help each time, and nobody else', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'A bug', author: 'alice' });
    const decided = w.decisions().length;
    await say(w, issue.number, '/resume');
    await say(w, issue.number, '/retry api');
    await say(w, issue.number, '/deploy now');
    await say(w, issue.number, '/resume', 'rita');
    // Each command decided (one comment, kept as it is), none crashed.
    const people = w
      .decisions()
      .slice(decided)
      .filter((d) => d.reason !== 'sent by a bot');
    expect(people.map((d) => `${d.outcome}: ${d.reason}`)).toEqual([
      'replied: not an epic',
      'replied: not an epic',
      'ignored: not an epic',
      'ignored: not an epic',
    ]);
    const replies = botComments(w, issue.number);
    expect(replies).toEqual([
      expect.stringContaining('This issue is not an epic (it has no **epic** label)'),
    ]);
    await say(w, issue.number, '/help');
    const help = botComments(w, issue.number).slice(1);
    expect(help).toEqual([expect.stringContaining('- `/retry <story>`')]);
    expect(w.gh.state.issue(OWNER, REPO, issue.number)?.labels).toEqual([]);
  });

  it('points from a story sub-issue to its epic', async () => {
    const epic = await startEpic(w, 'Pointer', planBody(TWO));
    const sub = w.gh.state
      .issues(OWNER, REPO)
      .find((i) => i.parentId === w.gh.state.issue(OWNER, REPO, epic)?.id);
    if (sub === undefined) throw new Error('no sub-issue');
    await say(w, sub.number, '/retry api');
    expect(botComments(w, sub.number)).toEqual([
      expect.stringContaining(`This is a story sub-issue of epic #${epic}`),
    ]);
    expect(dispatched(w.gh, epic)).toEqual(['api#1']);
  });

  it('answers once on a pull request that is not an epic pull request', async () => {
    const octokit = octokitFor(w.gh, w.alice.token);
    const base = { owner: OWNER, repo: REPO };
    const main = await w.gh.state.ref(OWNER, REPO, 'main');
    await octokit.rest.git.createRef({ ...base, ref: 'refs/heads/feature/typo', sha: main ?? '' });
    await octokit.rest.repos.createOrUpdateFileContents({
      ...base,
      path: 'TYPO.md',
      branch: 'feature/typo',
      message: 'Fix a typo',
      content: Buffer.from('typo\n').toString('base64'),
    });
    const { data: pr } = await octokit.rest.pulls.create({
      ...base,
      title: 'Fix a typo',
      head: 'feature/typo',
      base: 'main',
    });
    const decided = w.decisions().length;
    await say(w, pr.number, '/status');
    await say(w, pr.number, '/cancel');
    const people = w
      .decisions()
      .slice(decided)
      .filter((d) => d.reason !== 'sent by a bot');
    expect(people.map((d) => `${d.outcome}: ${d.reason}`)).toEqual([
      'replied: not an epic',
      'replied: not an epic',
    ]);
    expect(botComments(w, pr.number)).toEqual([
      expect.stringContaining('This pull request is not the pull request of an epic'),
    ]);
  });
});

describe('text far longer than a GitHub body', () => {
  it('caps every body and title epicflow writes, and still runs the epic', async () => {
    const limit = 65_536;
    const huge = Array.from(
      { length: 1_500 },
      (_, i) => `Line ${i}: ask @octocat about it, then read the spec again.`,
    ).join('\n');
    const stories = [
      { id: 'big', title: 'T'.repeat(1_000), description: huge },
      ...Array.from({ length: 20 }, (_, i) => ({
        id: `s${i}`,
        title: `${'Long title '.repeat(30)}${i}`,
      })),
    ];
    const epic = await startEpic(w, 'Huge', planBody(stories));
    expect(dispatched(w.gh, epic)).toContain('big#1');
    await failStory(w, epic, 'big', 1, `gates failed:\n${'npm test output line\n'.repeat(20_000)}`);

    const ours = w.gh.state
      .issues(OWNER, REPO)
      .filter((i) => i.author === 'epicflow[bot]' && i.title.length > 0);
    expect(ours.length).toBeGreaterThan(20);
    for (const i of ours) {
      expect(i.title.length).toBeLessThanOrEqual(256);
      expect((i.body ?? '').length).toBeLessThanOrEqual(limit);
    }
    const bigIssue = ours.find((i) => i.title.startsWith('big:'));
    expect(bigIssue?.body).toContain('Line 0: ask `@octocat` about it');
    const comments = w.gh.state
      .issues(OWNER, REPO)
      .flatMap((i) => w.gh.state.comments(OWNER, REPO, i.number))
      .filter((c) => c.author === 'epicflow[bot]');
    for (const c of comments) expect(c.body.length).toBeLessThanOrEqual(limit);
    const failure = w.gh.state
      .comments(OWNER, REPO, bigIssue?.number)
      .find((c) => c.body.includes('**Story `big` failed**'));
    expect(failure?.body.length).toBeLessThan(10_000);
    expect(w.gh.deliveries.filter((d) => d.status !== 200)).toEqual([]);
  });
});
