/**
 * Orchestrate mode alone: an event epicflow does not act on is ignored, a payload GitHub would
 * never send is refused with exit 1. Orchestrate mode deciding the events of a whole epic
 * app-less (its `status` output, a finished run that changes nothing more, a story job starting
 * its dependent itself) is test/action/epic-appless.test.ts's. The decider's own rules — a plan
 * approved only by a writer's edit of the plan, a forged story run or a bot's comment ignored —
 * are the same code the App runs, tested there per rule (test/app/plan-approval.test.ts,
 * test/app/forged-runs.test.ts, test/app/commands.test.ts).
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deliveredPayload, orchestrate } from './support/epic.js';
import { OWNER, REPO, buildBundle, startWorld, type ActionWorld } from './support/world.js';

let bundleDir: string;
let bundle: string;
let w: ActionWorld;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
  w = await startWorld();
});
afterAll(async () => {
  await w.close();
  await rm(bundleDir, { recursive: true, force: true });
});

describe('app-less: orchestrate mode', () => {
  it('ignores an event it does not handle, and refuses a payload that is not GitHub’s', async () => {
    // An issue opened: an event the workflow may receive that epicflow does not act on.
    w.gh.act.openIssue('alice', { owner: OWNER, repo: REPO, title: 'A bug' });
    const opened = await orchestrate(
      w,
      bundle,
      'opened',
      'issues',
      await deliveredPayload(w.gh, 'issues', 'opened'),
    );
    expect(opened.code).toBe(0);
    expect(opened.outputs['status']).toBe('ignored');

    // Hand-written on purpose: a payload GitHub would never send.
    const broken = await orchestrate(w, bundle, 'broken', 'issues', {
      action: 'labeled',
      issue: { number: 'one' },
    });
    expect(broken.code).toBe(1);
    expect(broken.summary).toContain('the issues event payload is not what GitHub sends');
    expect(broken.summary).toContain('issue.number');
  });
});
