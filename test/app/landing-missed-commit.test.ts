/**
 * A commit on the default branch that epicflow did not hear of (no push delivered): the App
 * finds the default branch ahead of the epic when the last story is done, so the pull request
 * stays a draft and `land-1` is dispatched; once the landing brought the commit in and
 * recorded it, the pull request is made ready. The story job and the landing are played here
 * (`completeStory`; the land job's merge and record written as the job writes them): the
 * landings themselves run the bundle in test/action/landing.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { readLandLog, withLand } from '../../src/core/land/index.js';
import { octokitFor } from '../github-double/client.js';
import {
  completeStory,
  dispatched,
  dispatchOf,
  OWNER,
  planBody,
  REPO,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

describe('a commit on the default branch epicflow did not hear of', () => {
  it('keeps the pull request a draft until a landing brought it in', async () => {
    const { gh } = w;
    const epic = await startEpic(w, 'Checkout', planBody([{ id: 'cart' }]));
    // Written through the contents API: the double sends no push for it (a missed delivery).
    const octokit = octokitFor(gh, w.alice.token);
    await octokit.rest.repos.createOrUpdateFileContents({
      owner: OWNER,
      repo: REPO,
      path: 'docs/missed.md',
      message: 'Missed',
      content: Buffer.from('missed\n').toString('base64'),
      branch: 'main',
    });
    await gh.idle();
    expect(dispatched(gh, epic)).toEqual(['cart#1']);
    await completeStory(w, epic, 'cart');
    expect(dispatched(gh, epic)).toEqual(['cart#1', 'land-1#1']);
    expect((await w.repo.findOpenPr(`epic/${epic}`, 'main'))?.draft).toBe(true);

    // The land job: main merged into the epic branch, its landing recorded, its run done.
    const { runId } = dispatchOf(gh, epic, 'land-1');
    gh.act.startWorkflowRun(runId);
    await gh.idle();
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const before = await store.readJson<unknown>('land');
    const log = readLandLog(before?.value ?? null, 'land.json');
    const running = log.lands.find((l) => l.job === 'land-1');
    expect(running?.outcome).toBe('running');
    const bot = octokitFor(gh, w.bot.token);
    const { data } = await bot.rest.repos.merge({
      owner: OWNER,
      repo: REPO,
      base: `epic/${epic}`,
      head: 'main',
      commit_message: `Merge main into epic/${epic}\n\nEpicflow-Land: main`,
    });
    if (running === undefined) throw new Error('no running landing');
    await store.writeJson(
      'land',
      withLand(log, {
        ...running,
        outcome: 'landed',
        epicHeadAfter: data.sha,
        finishedAt: new Date().toISOString(),
      }),
      before?.sha ?? null,
    );
    gh.act.completeWorkflowRun(runId, 'success');
    await gh.idle();

    expect(await gh.state.file(OWNER, REPO, `epic/${epic}`, 'docs/missed.md')).toBe('missed\n');
    expect((await w.repo.findOpenPr(`epic/${epic}`, 'main'))?.draft).toBe(false);
    expect(dispatched(gh, epic)).toEqual(['cart#1', 'land-1#1']);
  });
});
