/**
 * End to end with the App: a real probot App on a loopback server receives the
 * double's signed webhooks and dispatches story jobs; each job is the Action's
 * bundle run as a process. The App hears every finished run and finishes the epic.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { startEpic, type AppWorld } from '../app/harness.js';
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
  it('label → jobs → merged epic with a ready pull request, each story dispatched once', async () => {
    const epic = await startEpic(
      app,
      'Checkout',
      planBody([{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }]),
    );
    expect(dispatched(w, epic)).toEqual(['cart#1']);
    for (const story of ['cart', 'pay']) {
      const { runId } = dispatchOf(w, epic, story);
      w.gh.act.startWorkflowRun(runId);
      await w.gh.idle();
      const job = await runJob(w, bundle, {
        name: story,
        workspace: await checkout(w, story),
        inputs: storyInputs(w, epic, story),
        runId,
      });
      expect(job.code).toBe(0);
      w.gh.act.completeWorkflowRun(runId, 'success');
      await w.gh.idle();
    }
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
