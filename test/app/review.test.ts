/**
 * Review rounds through the App (story jobs played by the harness): who may ask for
 * one, what an empty request answers, and that a redelivered review starts nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { octokitFor } from '../github-double/client.js';
import {
  botComments,
  completeStory,
  dispatched,
  OWNER,
  planBody,
  REPO,
  say,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
  w.gh.seed.user({ login: 'rita', permission: 'read' });
});
afterAll(() => w.close());

/** A delivered two-story epic and its pull request's number. */
async function delivered(title: string): Promise<{ epic: number; pr: number }> {
  const epic = await startEpic(w, title, planBody([{ id: 'api' }, { id: 'ui' }]));
  await completeStory(w, epic, 'api');
  await completeStory(w, epic, 'ui');
  const pr = await w.repo.findOpenPr(`epic/${epic}`, 'main');
  if (pr === null) throw new Error('no pull request');
  expect(pr.draft).toBe(false);
  return { epic, pr: pr.number };
}

describe('asking for a review round', () => {
  it('answers /revise from someone without write permission, and /revise with nothing new to take', async () => {
    const { epic, pr } = await delivered('Revise');
    await say(w, pr, '/revise', 'rita');
    expect(botComments(w, pr).at(-1)).toContain(
      '@rita only users with write permission on this repository can steer epicflow',
    );
    await say(w, epic, '/revise');
    expect(botComments(w, epic).at(-1)).toBe(
      'No new review comments from people with write permission: no review round started.',
    );
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'ui#1']);
  });

  it('starts a round once for a review delivered twice', async () => {
    const { epic, pr } = await delivered('Redelivered');
    await octokitFor(w.gh, w.alice.token).rest.pulls.createReview({
      owner: OWNER,
      repo: REPO,
      pull_number: pr,
      event: 'REQUEST_CHANGES',
      comments: [{ path: 'src/api/index-1.ts', line: 1, body: 'Export a function.' }],
    });
    await w.gh.idle();
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'ui#1', 'api#2']);
    const review = w.gh.deliveries.filter((d) => d.event === 'pull_request_review').at(-1);
    if (review === undefined) throw new Error('no review delivery');
    await w.gh.redeliver(review.id);
    await w.gh.idle();
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'ui#1', 'api#2']);
    expect(botComments(w, pr).filter((b) => b.includes('Review round 1 started'))).toHaveLength(1);
    // The story's new merge finishes the round: answered, the pull request ready again.
    const merge = await completeStory(w, epic, 'api', 2);
    const answers = w.gh.state
      .reviewComments(OWNER, REPO)
      .filter((c) => c.pr === pr && c.author === 'epicflow[bot]');
    expect(answers.map((c) => c.body.split('\n')[0])).toEqual([
      `Addressed by story \`api\` in merge ${merge.slice(0, 7)} (review round 1).`,
    ]);
    expect((await w.repo.findOpenPr(`epic/${epic}`, 'main'))?.draft).toBe(false);
  });
});
