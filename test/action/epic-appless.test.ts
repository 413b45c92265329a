/**
 * The whole epic, app-less, end to end: four stories in three waves, every job
 * the Action's bundle run as a process, every event (the label, each finished
 * run, a person's /retry) handed to the bundle in orchestrate mode. Between
 * them the epic shows a failure that /retry fixes and a handover through exit 75.
 * A story writing outside its perimeter and a fix round are the engine's
 * (test/engine/perimeter.test.ts, test/engine/rounds.test.ts).
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EPIC,
  commentAs,
  expectEpicDelivered,
  labelEpic,
  runDispatched,
  sixStoryConfig,
  viaOrchestrate,
} from './support/epic.js';
import {
  OWNER,
  buildBundle,
  dispatched,
  planBody,
  startWorld,
  type ActionWorld,
} from './support/world.js';

let bundleDir: string;
let bundle: string;
let w: ActionWorld;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
  w = await startWorld({ config: sixStoryConfig });
  w.gh.seed.project({ owner: OWNER, number: 1, title: 'Epics' });
});
afterAll(async () => {
  await w.close();
  await rm(bundleDir, { recursive: true, force: true });
});

describe('a four-story epic, app-less, from label to a ready pull request', () => {
  it('delivers every story through /retry and a handover', async () => {
    const { epic, job: labeled } = await labelEpic(w, bundle, 'Checkout', planBody(EPIC));
    expect(labeled.code).toBe(0);
    expect(dispatched(w, epic)).toEqual(['cart#1', 'handover#1']);

    const done = new Set<number>();
    const first = await runDispatched(w, bundle, epic, done, viaOrchestrate(w, bundle));
    expect(first.map((r) => [`${r.story}#${r.attempt}`, r.code])).toEqual([
      ['cart#1', 0],
      ['handover#1', 0],
      ['retry#1', 1],
    ]);
    const failed = first.find((r) => r.story === 'retry');
    expect(failed?.stdout).toContain(
      '::error::story retry failed: coder turn failed (b): exit code 1 | the agent crashed',
    );
    const handover = first.find((r) => r.story === 'handover');
    expect(handover?.stdout).toContain('handover: handed over from a to b');
    expect(handover?.outputs['executor']).toBe('a → b');
    // The epic waits for a person: docs needs retry.
    expect(dispatched(w, epic)).not.toContain('docs#1');

    const retried = await commentAs(w, bundle, 'alice', epic, '/retry retry');
    expect(retried.code).toBe(0);
    expect(dispatched(w, epic)).toContain('retry#2');
    const second = await runDispatched(w, bundle, epic, done, viaOrchestrate(w, bundle));
    expect(second.map((r) => [`${r.story}#${r.attempt}`, r.code])).toEqual([
      ['retry#2', 0],
      ['docs#1', 0],
    ]);

    await expectEpicDelivered(w, epic);
  }, 720_000);
});
