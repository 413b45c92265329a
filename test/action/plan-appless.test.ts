/**
 * Planning app-less: every event (the label, the planning run's end, the writer's /approve) goes
 * to the bundle in orchestrate mode, and the planning job is the bundle in a run of the story
 * workflow (story `_plan`), acting with the workflow's token. Prose becomes an approved plan
 * without the App, and its first story merges: that story's two jobs run in-process
 * (test/orchestrator/support/story-jobs.ts: what they read and check on GitHub, the approval
 * orchestrate mode recorded included, is the bundle's code; the shell around them is
 * test/action/story.test.ts's), and its run's end is decided as orchestrate mode decides it
 * (`toEpicEvent`, `handleEpicEvent`): its dependent is dispatched. Story jobs run by the bundle
 * and their runs' ends delivered to orchestrate mode, wave after wave, are
 * test/action/epic-appless.test.ts's.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePlan } from '../../src/core/plan/index.js';
import { storyJobs } from '../orchestrator/support/story-jobs.js';
import {
  commentAs,
  labelEpic,
  runDispatched,
  runEndedInProcess,
  viaOrchestrate,
} from './support/epic.js';
import { planningConfig, PROSE } from './support/planning.js';
import {
  buildBundle,
  dispatchOf,
  dispatched,
  startWorld,
  type ActionWorld,
} from './support/world.js';

let bundleDir: string;
let bundle: string;
let w: ActionWorld;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
  w = await startWorld({ config: planningConfig });
});
afterAll(async () => {
  await w.close();
  await rm(bundleDir, { recursive: true, force: true });
});

describe('planning app-less, from prose to merged stories', () => {
  it('label → planning job → plan in the body → /approve → a story merged, its dependent dispatched', async () => {
    const { epic, job } = await labelEpic(w, bundle, 'Checkout', PROSE);
    expect(job.code).toBe(0);
    expect(dispatched(w, epic)).toEqual(['_plan#1']);

    const done = new Set<number>();
    const planned = await runDispatched(w, bundle, epic, done, viaOrchestrate(w, bundle));
    expect(planned.map((r) => [`${r.story}#${r.attempt}`, r.code])).toEqual([['_plan#1', 0]]);
    const body = (await w.repo.getIssue(epic)).body;
    expect(body.startsWith(PROSE.trimEnd())).toBe(true);
    const plan = parsePlan(body);
    expect(plan.ok && plan.plan.stories.map((s) => s.id)).toEqual(['cart', 'pay']);
    // Proposed, not approved: the planning run's end started nothing.
    expect(dispatched(w, epic)).toEqual(['_plan#1']);

    const approved = await commentAs(w, bundle, 'alice', epic, '/approve');
    expect(approved.code).toBe(0);
    expect(dispatched(w, epic)).toEqual(['_plan#1', 'cart#1']);

    // The first approved story's jobs: the plan orchestrate mode approved is accepted, and the
    // story merges.
    const { runId } = dispatchOf(w, epic, 'cart');
    w.gh.act.startWorkflowRun(runId);
    await w.gh.idle();
    const cart = await storyJobs(w, epic, 'cart');
    expect(cart.work.record.status).toBe('done');
    expect(cart.publish.record.status).toBe('done');
    const merged = await w.repo.mergedStories(`epic/${epic}`);
    expect([...merged.keys()]).toEqual(['cart']);

    // Its run's end, decided as orchestrate mode decides it: the dependent is dispatched.
    await runEndedInProcess(w, runId, 'success');
    expect(dispatched(w, epic)).toEqual(['_plan#1', 'cart#1', 'pay#1']);
  }, 720_000);
});
