/**
 * Planning app-less: every event (the label, the planning run's end, the writer's
 * /approve, each finished story run) goes to the bundle in orchestrate mode, and
 * the planning job is the bundle in a run of the story workflow (story `_plan`),
 * acting with the workflow's token. Prose becomes a merged story without the App, and its
 * dependent is dispatched.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePlan } from '../../src/core/plan/index.js';
import { commentAs, labelEpic, runDispatched, viaOrchestrate } from './support/epic.js';
import { planningConfig, PROSE } from './support/planning.js';
import {
  OWNER,
  REPO,
  buildBundle,
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
    // The first approved story as a job, its run's end delivered app-less: it merges, and the
    // orchestrate job dispatches its dependent. Delivering stories wave after wave app-less is
    // epic-appless.test.ts's.
    const stories = await runDispatched(w, bundle, epic, done, async (runId, conclusion) => {
      await viaOrchestrate(w, bundle)(runId, conclusion);
      // Only cart's run: pay, dispatched by it, is counted as run.
      for (const d of w.gh.state.dispatches(OWNER, REPO)) done.add(d.runId);
    });
    expect(stories.map((r) => [`${r.story}#${r.attempt}`, r.code])).toEqual([['cart#1', 0]]);
    expect(dispatched(w, epic)).toEqual(['_plan#1', 'cart#1', 'pay#1']);
    const merged = await w.repo.mergedStories(`epic/${epic}`);
    expect([...merged.keys()]).toEqual(['cart']);
  }, 720_000);
});
