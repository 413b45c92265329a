/**
 * Reviews as GitHub answers them: a review's line comments must be on a file the pull
 * request changes and on a line of its diff (422 otherwise); listings and thread
 * replies; the `pull_request_review.submitted` webhook (checked against GitHub's
 * webhook description like every payload the double sends).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Octokit } from '@octokit/rest';
import { octokitFor } from './client.js';
import { startGitHubDouble, type GitHubDouble } from './index.js';

const owner = 'acme';
const repo = 'shop';

let gh: GitHubDouble;
let octokit: Octokit;
let pr: number;

async function statusOf(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
    return { status: 0, message: '' };
  } catch (e) {
    const err = e as { status: number; response?: { data?: { message?: string } } };
    return { status: err.status, message: err.response?.data?.message ?? '' };
  }
}

beforeAll(async () => {
  gh = await startGitHubDouble();
  const alice = gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({ owner, name: repo, files: { 'a.js': 'one\ntwo\n', 'gone.js': 'x\n' } });
  octokit = octokitFor(gh, alice.token);
  const main = await octokit.rest.git.getRef({ owner, repo, ref: 'heads/main' });
  await octokit.rest.git.createRef({
    owner,
    repo,
    ref: 'refs/heads/topic',
    sha: main.data.object.sha,
  });
  const file = await octokit.rest.repos.getContent({ owner, repo, path: 'a.js', ref: 'topic' });
  await octokit.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path: 'a.js',
    branch: 'topic',
    message: 'three',
    content: Buffer.from('one\ntwo\nthree\n').toString('base64'),
    sha: (file.data as { sha: string }).sha,
  });
  const created = await octokit.rest.pulls.create({
    owner,
    repo,
    head: 'topic',
    base: 'main',
    title: 't',
  });
  pr = created.data.number;
});

afterAll(() => gh.close());

describe('pull request reviews', () => {
  it('refuses a comment on a file the pull request does not change, or on a line outside its diff', async () => {
    const base = { owner, repo, pull_number: pr, event: 'COMMENT' as const };
    expect(
      await statusOf(
        octokit.rest.pulls.createReview({
          ...base,
          comments: [{ path: 'gone.js', line: 1, body: 'x' }],
        }),
      ),
    ).toEqual({ status: 422, message: expect.stringContaining('Path could not be resolved') });
    expect(
      await statusOf(
        octokit.rest.pulls.createReview({
          ...base,
          comments: [{ path: 'a.js', line: 40, body: 'x' }],
        }),
      ),
    ).toEqual({ status: 422, message: expect.stringContaining('Line could not be resolved') });
    expect(gh.state.reviews(owner, repo)).toEqual([]);
  });

  it('creates a review with line comments, lists both, and replies in a thread', async () => {
    const review = await octokit.rest.pulls.createReview({
      owner,
      repo,
      pull_number: pr,
      event: 'REQUEST_CHANGES',
      body: 'Needs work.',
      comments: [{ path: 'a.js', line: 3, body: 'why three?' }],
    });
    expect(review.data.state).toBe('CHANGES_REQUESTED');
    await gh.idle();
    const reviews = await octokit.rest.pulls.listReviews({ owner, repo, pull_number: pr });
    expect(reviews.data.map((r) => [r.id, r.body])).toEqual([[review.data.id, 'Needs work.']]);
    const comments = await octokit.rest.pulls.listReviewComments({ owner, repo, pull_number: pr });
    expect(comments.data.map((c) => [c.path, c.line, c.pull_request_review_id])).toEqual([
      ['a.js', 3, review.data.id],
    ]);
    const id = comments.data[0]?.id ?? 0;
    const reply = await octokit.rest.pulls.createReplyForReviewComment({
      owner,
      repo,
      pull_number: pr,
      comment_id: id,
      body: 'because',
    });
    expect(reply.status).toBe(201);
    expect(reply.data.in_reply_to_id).toBe(id);
    expect(
      await statusOf(
        octokit.rest.pulls.createReplyForReviewComment({
          owner,
          repo,
          pull_number: pr,
          comment_id: 999999,
          body: 'nope',
        }),
      ),
    ).toMatchObject({ status: 404 });
  });
});
