/**
 * App-less delivery: orchestrate mode and story jobs, whose agents run as an agent user.
 * What the bundle alone shows: an event file read and decided, the job's outputs, the story
 * job starting its dependent, an ignored event, a payload refused with exit 1. The decider's
 * own rules — a plan approved only by a writer's edit of the plan, a forged story run or a
 * bot's comment ignored — are the same code the App runs, tested there per rule
 * (test/app/plan-approval.test.ts, test/app/forged-runs.test.ts, test/app/commands.test.ts).
 *
 * @needs root
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { deliveredPayload } from './support/epic.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  dispatched,
  planBody,
  runJob,
  startWorld,
  storyInputs,
  type ActionWorld,
} from './support/world.js';

let bundleDir: string;
let bundle: string;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
});
afterAll(async () => {
  await rm(bundleDir, { recursive: true, force: true });
});

/** Runs the bundle in orchestrate mode with an event as the runner would hand it over. */
async function orchestrate(w: ActionWorld, name: string, event: string, payload: unknown) {
  const path = join(w.dir, `${name}.json`);
  await writeFile(path, JSON.stringify(payload));
  return runJob(w, bundle, {
    name,
    workspace: w.dir,
    inputs: { mode: 'orchestrate', 'github-token': w.bot.token, 'bot-login': 'epicflow[bot]' },
    env: { GITHUB_EVENT_NAME: event, GITHUB_EVENT_PATH: path },
  });
}

describe('app-less: orchestrate mode and story jobs deliver an epic', () => {
  let w: ActionWorld;
  afterEach(async () => {
    await w.close();
  });

  it('a label starts the epic, a story job merges and starts its dependent, the finished run changes nothing more', async () => {
    w = await startWorld();
    const body = planBody([{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }]);
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Checkout',
      body,
      author: 'alice',
    });
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: issue.number, label: 'epic' });
    const labeled = await orchestrate(
      w,
      'labeled',
      'issues',
      await deliveredPayload(w.gh, 'issues', 'labeled'),
    );
    expect(labeled.code).toBe(0);
    expect(labeled.outputs['status']).toBe('reconciled');
    expect(dispatched(w, issue.number)).toEqual(['cart#1']);
    expect(
      w.gh.state.comments(OWNER, REPO, issue.number).some((c) => c.author === 'epicflow[bot]'),
    ).toBe(true);

    const cart = await runJob(w, bundle, {
      name: 'cart',
      workspace: await checkout(w, 'cart'),
      inputs: storyInputs(w, issue.number, 'cart'),
      runId: dispatchOf(w, issue.number, 'cart').runId,
    });
    expect(cart.code).toBe(0);
    expect(cart.outputs['status']).toBe('done');
    // The job itself started the dependent.
    expect(dispatched(w, issue.number)).toEqual(['cart#1', 'pay#1']);

    // The run of `cart` completes: the orchestrate workflow hears of it and dispatches nothing again.
    const runId = dispatchOf(w, issue.number, 'cart').runId;
    w.gh.act.completeWorkflowRun(runId, 'success');
    const payload = await deliveredPayload(w.gh, 'workflow_run', 'completed');
    expect((payload['workflow_run'] as { display_title?: unknown }).display_title).toBe(
      `epicflow epic ${issue.number} story cart attempt 1`,
    );
    const done = await orchestrate(w, 'run-done', 'workflow_run', payload);
    expect(done.code).toBe(0);
    expect(done.outputs['status']).toBe('reconciled');
    expect(dispatched(w, issue.number)).toEqual(['cart#1', 'pay#1']);
    const store = new GitHubStateStore({ repo: w.repo, epic: String(issue.number) });
    expect((await store.listStories()).map((r) => [r.story, r.status])).toEqual([
      ['cart', 'done'],
      ['pay', 'active'],
    ]);
  });

  it('ignores an event it does not handle, and refuses a payload that is not GitHub’s', async () => {
    w = await startWorld();
    // An issue opened: an event the workflow may receive that epicflow does not act on.
    w.gh.act.openIssue('alice', { owner: OWNER, repo: REPO, title: 'A bug' });
    const opened = await orchestrate(
      w,
      'opened',
      'issues',
      await deliveredPayload(w.gh, 'issues', 'opened'),
    );
    expect(opened.code).toBe(0);
    expect(opened.outputs['status']).toBe('ignored');

    // Hand-written on purpose: a payload GitHub would never send.
    const broken = await orchestrate(w, 'broken', 'issues', {
      action: 'labeled',
      issue: { number: 'one' },
    });
    expect(broken.code).toBe(1);
    expect(broken.summary).toContain('the issues event payload is not what GitHub sends');
    expect(broken.summary).toContain('issue.number');
  });
});
