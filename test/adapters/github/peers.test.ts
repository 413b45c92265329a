/**
 * A repository acting as one login that also owns another login's marked comments
 * and sub-issues (the epic's owner): found and updated in place under either, never
 * a user's planted marker.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOctokit } from '../../../src/adapters/github/client.js';
import { GitHubRepo } from '../../../src/adapters/github/repo.js';
import type { SeededUser } from '../../github-double/index.js';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;
let actions: SeededUser;
/** The workflow's own token, acting as github-actions[bot]. */
let jobRepo: GitHubRepo;

beforeAll(async () => {
  w = await startWorld();
  actions = w.gh.seed.user({ login: 'github-actions[bot]', type: 'Bot', permission: 'write' });
  w.gh.seed.user({ login: 'mallory', permission: 'read' });
  jobRepo = new GitHubRepo({
    owner: OWNER,
    repo: REPO,
    botLogin: 'github-actions[bot]',
    octokit: createOctokit({ baseUrl: w.gh.url, token: actions.token, production: false }),
  });
});
afterAll(() => w.gh.close());

const marked = (n: number, marker: string): { author: string; body: string }[] =>
  w.gh.state
    .comments(OWNER, REPO, n)
    .filter((c) => c.body.includes(`<!-- epicflow:${marker} -->`))
    .map((c) => ({ author: c.author, body: c.body }));

describe('withPeer', () => {
  it("updates the peer's marked comment in place instead of adding one", async () => {
    const n = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic' }).number;
    await w.repo.ensureComment({ issueNumber: n, marker: 'status', body: 'by the App' });
    const peered = jobRepo.withPeer('epicflow[bot]');
    const found = await peered.findComment(n, 'status');
    expect(found?.body).toContain('by the App');
    const result = await peered.ensureComment({ issueNumber: n, marker: 'status', body: 'job' });
    expect(result.action).toBe('updated');
    expect(marked(n, 'status')).toEqual([
      { author: 'epicflow[bot]', body: 'job\n\n<!-- epicflow:status -->' },
    ]);
    // Without the peer the job sees no comment of its own.
    expect(await jobRepo.findComment(n, 'status')).toBeNull();
  });

  it("never takes a user's planted marker for the peer's or its own", async () => {
    const n = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic' }).number;
    w.gh.act.comment('mallory', {
      owner: OWNER,
      repo: REPO,
      number: n,
      body: 'planted\n\n<!-- epicflow:status -->',
    });
    const peered = jobRepo.withPeer('epicflow[bot]');
    expect(await peered.findComment(n, 'status')).toBeNull();
    const result = await peered.ensureComment({ issueNumber: n, marker: 'status', body: 'real' });
    expect(result.action).toBe('created');
    expect(marked(n, 'status').map((c) => c.author)).toEqual(['mallory', 'github-actions[bot]']);
    expect(marked(n, 'status')[0]?.body).toBe('planted\n\n<!-- epicflow:status -->');
  });

  it("reuses the peer's sub-issue of a story, not a user's with the same markers", async () => {
    const parent = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic' }).number;
    const first = await w.repo.ensureSubIssue({
      parent,
      storyId: 'cart',
      title: 'cart: Build cart',
      body: 'Build the cart.',
    });
    expect(first.action).toBe('created');
    const again = await jobRepo.withPeer('epicflow[bot]').ensureSubIssue({
      parent,
      storyId: 'cart',
      title: 'cart: Build cart',
      body: 'Build the cart.',
    });
    expect({ action: again.action, number: again.number }).toEqual({
      action: 'unchanged',
      number: first.number,
    });
    const subs = await w.repo.listSubIssues(parent);
    expect(subs.map((s) => s.author)).toEqual(['epicflow[bot]']);
  });

  it('is the same repository when the peer is unset or its own login', () => {
    expect(jobRepo.withPeer(undefined)).toBe(jobRepo);
    expect(jobRepo.withPeer('github-actions')).toBe(jobRepo);
    expect(jobRepo.withPeer('epicflow[bot]').isOurs('EpicFlow')).toBe(true);
    expect(jobRepo.withPeer('epicflow[bot]').isOurs('mallory')).toBe(false);
  });
});
