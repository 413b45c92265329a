/**
 * One listing of an issue's comments answers every marker a decision asks about:
 * the status, an error, the violations. Asked again, a marker is looked up anew.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { GitHubCache } from '../../../src/adapters/github/cache.js';
import { GitHubRepo } from '../../../src/adapters/github/repo.js';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(() => w.gh.close());

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

it('one listing answers a second marker, present or absent, without a request', async () => {
  const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Markers' });
  await w.repo.ensureComment({ issueNumber: issue.number, marker: 'status', body: 'one' });
  await w.repo.ensureComment({ issueNumber: issue.number, marker: 'error', body: 'stopped' });
  w.gh.act.comment('mallory', {
    owner: OWNER,
    repo: REPO,
    number: issue.number,
    body: 'fake <!-- epicflow:violations -->',
  });
  // A new port (as the App makes per event), sharing the long-lived cache.
  const repo = new GitHubRepo({
    owner: OWNER,
    repo: REPO,
    botLogin: w.repo.botLogin,
    octokit: w.repo.octokit,
    cache: new GitHubCache(),
  });
  const n = issue.number;
  let error: unknown;
  expect(
    await counting(async () => {
      error = await repo.findComment(n, 'error');
    }),
  ).toEqual({ 'issues/list-comments': 1 });
  expect(error).toMatchObject({ body: expect.stringContaining('stopped') as unknown as string });
  expect(
    await counting(async () => {
      expect(await repo.findComment(n, 'violations')).toBeNull(); // mallory's is not ours
      expect(
        (await repo.ensureComment({ issueNumber: n, marker: 'status', body: 'one' })).action,
      ).toBe('unchanged');
    }),
  ).toEqual({});
  // Asked again: looked up anew (the comment may have been deleted since).
  expect(
    await counting(async () => {
      expect(await repo.findComment(n, 'error')).not.toBeNull();
    }),
  ).toEqual({ 'issues/get-comment': 1 });
  // A marker created after the listing is found where it was written.
  const created = await repo.ensureComment({ issueNumber: n, marker: 'violations', body: 'v' });
  expect(created.action).toBe('created');
  expect(
    await counting(async () => {
      expect(
        await repo.ensureComment({ issueNumber: n, marker: 'violations', body: 'v2' }),
      ).toEqual({
        id: created.id,
        action: 'updated',
      });
    }),
  ).toEqual({ 'issues/update-comment': 1 });
  expect(
    w.gh.state.comments(OWNER, REPO, n).filter((c) => c.author === w.repo.botLogin),
  ).toHaveLength(3);
});
