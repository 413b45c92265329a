/**
 * What a long-lived process saves with a shared `GitHubCache`: merged stories walked only over new commits, sticky comments found
 * without listing. Counted from the double's per-operation stats.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubCache } from '../../../src/adapters/github/cache.js';
import { readEpicView } from '../../../src/adapters/github/epic-view.js';
import { GitHubRepo } from '../../../src/adapters/github/repo.js';
import { gitBlobSha, GitHubStateStore } from '../../../src/adapters/github/state-store.js';
import type { StoryRecord } from '../../../src/core/model.js';
import { octokitFor } from '../../github-double/client.js';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(() => w.gh.close());

/** A repository port with its own cache, as the App holds one. */
function cachedRepo(): GitHubRepo {
  return new GitHubRepo({
    owner: OWNER,
    repo: REPO,
    botLogin: w.repo.botLogin,
    octokit: w.repo.octokit,
    cache: new GitHubCache(),
  });
}

/** Requests per operation made while `fn` ran. */
async function counting(fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = { ...w.gh.stats.rest };
  await fn();
  const out: Record<string, number> = {};
  for (const [op, n] of Object.entries(w.gh.stats.rest)) {
    const d = n - (before[op] ?? 0);
    if (d > 0) out[op] = d;
  }
  return out;
}

function record(epic: string, story: string, over: Partial<StoryRecord> = {}): StoryRecord {
  return {
    version: 1,
    epic,
    story,
    planHash: 'h1',
    status: 'planned',
    branch: `story/${epic}/${story}`,
    attempt: 1,
    executors: [],
    usage: [],
    notes: [],
    timings: {},
    ...over,
  };
}

describe('GitHubStateStore.read', () => {
  it('refuses a record that is not a valid record of its story, naming the file', async () => {
    const writer = new GitHubStateStore({ repo: w.repo, epic: '41' });
    await writer.write(record('41', 'ok'), null);
    await writer.writeJson('epic', {}, null);
    const octokit = octokitFor(w.gh, w.bot.token);
    await octokit.rest.repos.createOrUpdateFileContents({
      owner: OWNER,
      repo: REPO,
      branch: 'epicflow/state',
      path: 'epics/41/stories/bad.json',
      message: 'hand edit',
      content: Buffer.from('{"story": "bad"}').toString('base64'),
    });
    await expect(
      new GitHubStateStore({ repo: cachedRepo(), epic: '41' }).read('bad'),
    ).rejects.toThrow(
      'GitHub state: epics/41/stories/bad.json on branch epicflow/state of acme/shop is not a version-1 story record of story bad in epic 41; fix or delete the file',
    );
  });
});

describe('GitHubStateStore.writeTextIfChanged', () => {
  it('writes a text file once and not again while it is the same', async () => {
    const store = new GitHubStateStore({ repo: w.repo, epic: '42' });
    const text = '# Report\n\nall done\n';
    const first = await store.writeTextIfChanged('report.md', text, null);
    expect(first).toEqual({ written: true, sha: gitBlobSha(text) });
    expect(await w.gh.state.file(OWNER, REPO, 'epicflow/state', 'epics/42/report.md')).toBe(text);
    const again = await counting(async () => {
      expect(await store.writeTextIfChanged('report.md', text, first.sha)).toEqual({
        written: false,
        sha: first.sha,
      });
    });
    expect(again).toEqual({});
    // A stale sha (someone wrote meanwhile): the newest text still lands.
    const next = '# Report\n\nmore\n';
    expect((await store.writeTextIfChanged('report.md', next, null)).written).toBe(true);
    expect(await w.gh.state.file(OWNER, REPO, 'epicflow/state', 'epics/42/report.md')).toBe(next);
  });
});

describe('GitHubRepo with a cache', () => {
  it('walks only the commits new since the last read of the merged stories', async () => {
    const repo = cachedRepo();
    const octokit = octokitFor(w.gh, w.bot.token);
    const base = { owner: OWNER, repo: REPO };
    const start = await repo.ensureBranchWithCommit({
      name: 'epic/50',
      fromBranch: 'main',
      message: 'Start epic #50: Cache',
    });
    const merge = async (story: string): Promise<string> => {
      const branch = `story/50/${story}`;
      const head = (await w.gh.state.ref(OWNER, REPO, 'epic/50')) ?? '';
      await octokit.rest.git.createRef({ ...base, ref: `refs/heads/${branch}`, sha: head });
      await octokit.rest.repos.createOrUpdateFileContents({
        ...base,
        branch,
        path: `src/${story}.ts`,
        message: story,
        content: Buffer.from(story).toString('base64'),
      });
      const { data } = await octokit.rest.repos.merge({
        ...base,
        base: 'epic/50',
        head: branch,
        commit_message: `Merge ${story}\n\nEpicflow-Story: ${story}`,
      });
      return data.sha;
    };
    const one = await merge('one');
    const two = await merge('two');
    let merged = new Map<string, string>();
    expect(
      await counting(async () => {
        merged = await repo.mergedStories('epic/50');
      }),
    ).toEqual({ 'git/get-ref': 1, 'git/get-commit': 2 }); // the start commit is known
    expect(merged).toEqual(
      new Map([
        ['one', one],
        ['two', two],
      ]),
    );
    expect(await counting(() => repo.mergedStories('epic/50'))).toEqual({ 'git/get-ref': 1 });
    const three = await merge('three');
    expect(
      await counting(async () => {
        merged = await repo.mergedStories('epic/50');
      }),
    ).toEqual({ 'git/get-ref': 1, 'git/get-commit': 1 });
    expect([...merged.entries()].sort()).toEqual(
      [
        ['one', one],
        ['three', three],
        ['two', two],
      ].sort(),
    );
    expect(start.action).toBe('created');
  });

  it('reads the merge commits its records name in one GraphQL request, and a wrong hint changes nothing', async () => {
    const octokit = octokitFor(w.gh, w.bot.token);
    const base = { owner: OWNER, repo: REPO };
    await cachedRepo().ensureBranchWithCommit({
      name: 'epic/52',
      fromBranch: 'main',
      message: 'Start epic #52: Hints',
    });
    const merge = async (story: string): Promise<string> => {
      const branch = `story/52/${story}`;
      const head = (await w.gh.state.ref(OWNER, REPO, 'epic/52')) ?? '';
      await octokit.rest.git.createRef({ ...base, ref: `refs/heads/${branch}`, sha: head });
      await octokit.rest.repos.createOrUpdateFileContents({
        ...base,
        branch,
        path: `src/${story}.ts`,
        message: story,
        content: Buffer.from(story).toString('base64'),
      });
      const { data } = await octokit.rest.repos.merge({
        ...base,
        base: 'epic/52',
        head: branch,
        commit_message: `Merge ${story}\n\nEpicflow-Story: ${story}`,
      });
      return data.sha;
    };
    const shas = new Map<string, string>();
    for (const story of ['a', 'b', 'c', 'd', 'e']) shas.set(story, await merge(story));
    const main = (await w.gh.state.ref(OWNER, REPO, 'main')) ?? '';
    const graphql0 = w.gh.stats.graphql['EpicflowCommits'] ?? 0;
    let merged = new Map<string, string>();
    // A fresh process (a story job): its records name four of the five merges, one record
    // names a commit that is not on the branch and one no commit at all.
    const hints = [
      shas.get('a'),
      shas.get('b'),
      shas.get('c'),
      shas.get('e'),
      main,
      'f'.repeat(40),
    ];
    expect(
      await counting(async () => {
        merged = await cachedRepo().mergedStories('epic/52', {
          hints: hints.filter((h): h is string => h !== undefined),
        });
      }),
      // Only `d` (no record): its message, read with `e` as its parent, names a story, so
      // the walk reads it whole; the start commit's message came with `a`: no read for it.
    ).toEqual({ 'git/get-ref': 1, 'git/get-commit': 1 });
    expect(w.gh.stats.graphql['EpicflowCommits'] ?? 0).toBe(graphql0 + 1);
    expect(merged).toEqual(new Map(shas));
  });

  it('starts an epic branch with one empty commit on the default branch, once', async () => {
    const repo = cachedRepo();
    const main = (await w.gh.state.ref(OWNER, REPO, 'main')) ?? '';
    const created = await repo.ensureBranchWithCommit({
      name: 'epic/51',
      fromBranch: 'main',
      message: 'Start epic #51: Payments',
    });
    expect(created.action).toBe('created');
    const { data } = await repo.octokit.rest.git.getCommit({
      owner: OWNER,
      repo: REPO,
      commit_sha: created.sha,
    });
    const { data: parent } = await repo.octokit.rest.git.getCommit({
      owner: OWNER,
      repo: REPO,
      commit_sha: main,
    });
    expect(data.message).toBe('Start epic #51: Payments');
    expect(data.parents.map((p) => p.sha)).toEqual([main]);
    expect(data.tree.sha).toBe(parent.tree.sha);
    const again = await repo.ensureBranchWithCommit({
      name: 'epic/51',
      fromBranch: 'main',
      message: 'Start epic #51: Payments',
    });
    expect(again).toEqual({ sha: created.sha, action: 'unchanged' });
  });

  it('finds a remembered sticky comment without listing, and lists again when the id is gone', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Sticky' });
    const repo = cachedRepo();
    for (let i = 0; i < 30; i++) {
      w.gh.act.comment('alice', {
        owner: OWNER,
        repo: REPO,
        number: issue.number,
        body: `hi ${i}`,
      });
    }
    const input = { issueNumber: issue.number, marker: 'status' };
    const created = await repo.ensureComment({ ...input, body: 'one' });
    expect(created.action).toBe('created');
    // Changed: written straight away.
    expect(
      await counting(async () => {
        expect(await repo.ensureComment({ ...input, body: 'two' })).toEqual({
          id: created.id,
          action: 'updated',
        });
      }),
    ).toEqual({ 'issues/update-comment': 1 });
    // Unchanged: one read of that comment.
    expect(
      await counting(async () => {
        expect((await repo.ensureComment({ ...input, body: 'two' })).action).toBe('unchanged');
      }),
    ).toEqual({ 'issues/get-comment': 1 });
    // A remembered id that no longer exists (deleted): the write fails, the issue is
    // listed, and the comment found there is the one written.
    repo.cache.comments.set(`acme/shop#${issue.number}:status`, { id: 987654321, body: 'x' });
    expect(
      await counting(async () => {
        expect(await repo.ensureComment({ ...input, body: 'three' })).toEqual({
          id: created.id,
          action: 'updated',
        });
      }),
    ).toEqual({ 'issues/update-comment': 2, 'issues/list-comments': 1 });
    const ours = w.gh.state
      .comments(OWNER, REPO, issue.number)
      .filter((c) => c.author === 'epicflow[bot]')
      .map((c) => c.body);
    expect(ours).toEqual([expect.stringContaining('three')]);
  });
});

describe('the epic view with the issue comments', () => {
  it('finds the status comment without listing, writes it only when it changed, and trusts no one else’s marker', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Viewed epic' });
    // Someone else's comment carrying the marker first: never taken for ours.
    w.gh.act.comment('alice', {
      owner: OWNER,
      repo: REPO,
      number: issue.number,
      body: 'fake <!-- epicflow:status -->',
    });
    const writer = cachedRepo();
    const { id } = await writer.ensureComment({
      issueNumber: issue.number,
      marker: 'status',
      body: 'Status: one',
    });
    // A fresh process (a story job) reads the view, then ensures the same status.
    const fresh = cachedRepo();
    const view = await readEpicView(fresh, {
      stateBranch: 'epicflow/state',
      folder: `epics/${issue.number}`,
      epicBranch: `epic/${issue.number}`,
      baseBranch: 'main',
      epic: issue.number,
      configPath: '.github/epicflow.yml',
    });
    expect(view.issue?.comments?.complete).toBe(true);
    fresh.knowComments(issue.number, view.issue?.comments ?? { complete: false, comments: [] });
    expect(
      await counting(async () => {
        const same = await fresh.ensureComment({
          issueNumber: issue.number,
          marker: 'status',
          body: 'Status: one',
        });
        expect(same).toEqual({ id, action: 'unchanged' });
      }),
    ).toEqual({});
    expect(
      await counting(async () => {
        const next = await fresh.ensureComment({
          issueNumber: issue.number,
          marker: 'status',
          body: 'Status: two',
        });
        expect(next).toEqual({ id, action: 'updated' });
      }),
    ).toEqual({ 'issues/update-comment': 1 });
    expect(w.gh.state.comments(OWNER, REPO, issue.number).map((c) => c.body)).toEqual([
      'fake <!-- epicflow:status -->',
      expect.stringContaining('Status: two'),
    ]);
    // An incomplete listing without the marker proves nothing: the issue is listed.
    const other = cachedRepo();
    other.knowComments(issue.number, { complete: false, comments: [] });
    expect(
      await counting(async () => {
        expect((await other.findComment(issue.number, 'status'))?.id).toBe(id);
      }),
    ).toEqual({ 'issues/list-comments': 1 });
  });
});
