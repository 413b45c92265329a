/**
 * End to end with the App: a real probot App on a loopback server receives the double's signed
 * webhooks and dispatches a story job; the job is the Action's bundle run as a process. The job
 * starts its dependent itself and the App, hearing the run finish, does not start it again: each
 * story is dispatched once. The dependent's own job is the App harness's (`completeStory`): a
 * story job is test/action/story.test.ts's, and the App finishing a delivered epic (the pull
 * request ready, the sub-issues closed) is decided by the App (test/app/epic.test.ts); its
 * assertions stay here on this epic.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { completeStory, startEpic, type AppWorld } from '../app/harness.js';
import { startAppActionWorld, type AppActionWorld } from './support/app-world.js';
import {
  checkout,
  configText,
  dispatchOf,
  dispatched,
  planBody,
  runJob,
  storyInputs,
  type ActionWorld,
} from './support/world.js';

let world: AppActionWorld;
let bundle: string;
let app: AppWorld;
let w: ActionWorld;

beforeAll(async () => {
  world = await startAppActionWorld('app-e2e', (dumps) => configText(dumps, {}));
  ({ app, w, bundle } = world);
});
afterAll(() => world.close());

describe('the App and the story Action together', () => {
  it('label → job → merged epic with a ready pull request, each story dispatched once', async () => {
    const epic = await startEpic(
      app,
      'Checkout',
      planBody([{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }]),
    );
    expect(dispatched(w, epic)).toEqual(['cart#1']);
    const { runId } = dispatchOf(w, epic, 'cart');
    w.gh.act.startWorkflowRun(runId);
    await w.gh.idle();
    const job = await runJob(w, bundle, {
      name: 'cart',
      workspace: await checkout(w, 'cart'),
      inputs: storyInputs(w, epic, 'cart'),
      runId,
    });
    expect(job.code).toBe(0);
    // The job itself started the dependent; the App, hearing the run finish, does not again.
    expect(dispatched(w, epic)).toEqual(['cart#1', 'pay#1']);
    w.gh.act.completeWorkflowRun(runId, 'success');
    await w.gh.idle();
    expect(dispatched(w, epic)).toEqual(['cart#1', 'pay#1']);

    await completeStory(app, epic, 'pay');
    expect(dispatched(w, epic)).toEqual(['cart#1', 'pay#1']);
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.listStories()).map((r) => [r.story, r.status])).toEqual([
      ['cart', 'done'],
      ['pay', 'done'],
    ]);
    // Every story merged with its trailer; the draft pull request is ready for review.
    const merged = await w.repo.mergedStories(`epic/${epic}`);
    expect([...merged.keys()].sort()).toEqual(['cart', 'pay']);
    const pr = await w.repo.findOpenPr(`epic/${epic}`, 'main');
    expect(pr?.draft).toBe(false);
    // Sub-issues closed as their stories merged.
    const subs = await w.repo.listSubIssues(epic);
    expect(subs.map((s) => s.state)).toEqual(['closed', 'closed']);
  });
});
