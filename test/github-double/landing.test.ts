/**
 * The double's pushes and pull request merges, as GitHub answers them: every answer
 * and webhook payload is contract-checked after each test (test/support/after-each.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Octokit } from '@octokit/rest';
import { startGitHubDouble, type GitHubDouble, type SeededUser } from './index.js';

let gh: GitHubDouble;
let alice: SeededUser;
let octokit: Octokit;
const repo = { owner: 'acme', repo: 'shop' };

beforeAll(async () => {
  gh = await startGitHubDouble();
  alice = gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({ owner: 'acme', name: 'shop', files: { 'a.txt': 'one\n' } });
  octokit = new Octokit({ baseUrl: gh.url, auth: alice.token });
});
afterAll(() => gh.close());

async function branch(name: string, files: Record<string, string>): Promise<string> {
  const main = await gh.state.ref('acme', 'shop', 'main');
  await octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${name}`, sha: main ?? '' });
  return gh.act.pushFiles('alice', { ...repo, branch: name, files, message: `on ${name}` });
}

function deliveries(event: string): Record<string, unknown>[] {
  return gh.deliveries.filter((d) => d.event === event).map((d) => d.payload);
}

describe('pushes', () => {
  it('a pushed commit moves the branch and sends push with before and after', async () => {
    const before = await gh.state.ref('acme', 'shop', 'main');
    const after = await gh.act.pushFiles('alice', {
      ...repo,
      branch: 'main',
      files: { 'b.txt': 'two\n' },
      message: 'Add b',
    });
    expect(await gh.state.ref('acme', 'shop', 'main')).toBe(after);
    await gh.idle();
    const push = deliveries('push').at(-1);
    expect(push).toMatchObject({ ref: 'refs/heads/main', before, after, created: false });
    expect(await gh.state.file('acme', 'shop', 'main', 'b.txt')).toBe('two\n');
  });
});

describe('merging a pull request', () => {
  it('merges with a merge commit, closes it with merged: true, keeps the head branch by default', async () => {
    const head = await branch('feature', { 'c.txt': 'three\n' });
    const { data: pr } = await octokit.rest.pulls.create({
      ...repo,
      head: 'feature',
      base: 'main',
      title: 'Feature',
    });
    const { data: open } = await octokit.rest.pulls.get({ ...repo, pull_number: pr.number });
    expect(open.mergeable).toBe(true);
    const { data: merged } = await octokit.rest.pulls.merge({ ...repo, pull_number: pr.number });
    expect(merged.merged).toBe(true);
    const main = await gh.state.ref('acme', 'shop', 'main');
    expect(main).toBe(merged.sha);
    const { data: after } = await octokit.rest.pulls.get({ ...repo, pull_number: pr.number });
    expect(after).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: merged.sha });
    expect(await gh.state.ref('acme', 'shop', 'feature')).toBe(head);
    await gh.idle();
    const closed = deliveries('pull_request').at(-1);
    expect(closed).toMatchObject({ action: 'closed', number: pr.number });
    expect((closed?.['pull_request'] as { merged: boolean }).merged).toBe(true);
    // A merged pull request merges no more.
    await expect(
      octokit.rest.pulls.merge({ ...repo, pull_number: pr.number }),
    ).rejects.toMatchObject({ status: 405 });
  });

  it('deletes the head branch when the repository deletes merged branches', async () => {
    gh.act.setDeleteBranchOnMerge({ ...repo, value: true });
    try {
      await branch('gone', { 'd.txt': 'four\n' });
      const { data: pr } = await octokit.rest.pulls.create({
        ...repo,
        head: 'gone',
        base: 'main',
        title: 'Gone',
      });
      await gh.act.mergePullRequest('alice', { ...repo, number: pr.number });
      expect(await gh.state.ref('acme', 'shop', 'gone')).toBeUndefined();
      const { data } = await octokit.rest.repos.get(repo);
      expect(data.delete_branch_on_merge).toBe(true);
    } finally {
      gh.act.setDeleteBranchOnMerge({ ...repo, value: false });
    }
  });

  it('a conflicting pull request is not mergeable (405), and says so', async () => {
    await branch('clash', { 'a.txt': 'theirs\n' });
    await gh.act.pushFiles('alice', {
      ...repo,
      branch: 'main',
      files: { 'a.txt': 'ours\n' },
      message: 'Change a',
    });
    const { data: pr } = await octokit.rest.pulls.create({
      ...repo,
      head: 'clash',
      base: 'main',
      title: 'Clash',
    });
    const { data } = await octokit.rest.pulls.get({ ...repo, pull_number: pr.number });
    expect(data).toMatchObject({ mergeable: false, mergeable_state: 'dirty' });
    await expect(
      octokit.rest.pulls.merge({ ...repo, pull_number: pr.number }),
    ).rejects.toMatchObject({ status: 405 });
  });

  it('closing without a merge sends closed with merged: false', async () => {
    await branch('nope', { 'e.txt': 'five\n' });
    const { data: pr } = await octokit.rest.pulls.create({
      ...repo,
      head: 'nope',
      base: 'main',
      title: 'Nope',
    });
    await octokit.rest.pulls.update({ ...repo, pull_number: pr.number, state: 'closed' });
    await gh.idle();
    const closed = deliveries('pull_request').at(-1);
    expect(closed).toMatchObject({ action: 'closed', number: pr.number });
    expect((closed?.['pull_request'] as { merged: boolean }).merged).toBe(false);
  });
});

describe('comparing', () => {
  it('says how far a branch is ahead of and behind another', async () => {
    await branch('cmp', { 'f.txt': 'six\n' });
    await gh.act.pushFiles('alice', {
      ...repo,
      branch: 'main',
      files: { 'g.txt': 'seven\n' },
      message: 'g',
    });
    const { data } = await octokit.rest.repos.compareCommits({
      ...repo,
      base: 'main',
      head: 'cmp',
    });
    expect(data).toMatchObject({ status: 'diverged', ahead_by: 1, behind_by: 1, total_commits: 1 });
    const { data: same } = await octokit.rest.repos.compareCommits({
      ...repo,
      base: 'main',
      head: 'main',
    });
    expect(same).toMatchObject({ status: 'identical', ahead_by: 0, behind_by: 0 });
    await expect(
      octokit.rest.repos.compareCommits({ ...repo, base: 'main', head: 'nowhere' }),
    ).rejects.toMatchObject({ status: 404 });
  });
});
