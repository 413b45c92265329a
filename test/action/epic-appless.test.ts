/**
 * The whole epic, app-less, end to end: two stories in two waves, every job the Action's bundle
 * run as a process, every event (the label, each finished run, a person's /retry) handed to the
 * bundle in orchestrate mode. What only the bundle shows: orchestrate mode reading an event file
 * and deciding it (its `status` output), a story job starting its dependent itself, a handover
 * through exit 75 of an agent run as the agent user (and the executor it left out skipped by the
 * next job), a crashed story failing its job with an annotation and the failure comment naming
 * its log in the job's artifact, /retry, and the report and board at the end.
 *
 * Decided below the bundle, by the same code the App runs: a wave of several stories, a story
 * waiting for a failed dependency and the failure on its sub-issue (test/core/epic/reconcile.test.ts),
 * /retry and its failure comment (test/app/commands.test.ts), the handover's rules
 * (test/engine/roster.test.ts), the report's executors (test/core/report/report.test.ts). A
 * story writing outside its perimeter and a fix round are the engine's
 * (test/engine/perimeter.test.ts, test/engine/rounds.test.ts); an event orchestrate mode ignores
 * or refuses is test/action/orchestrate.test.ts's.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { boardStatus } from '../app/harness.js';
import {
  botComments,
  commentAs,
  deliveredPayload,
  labelEpic,
  orchestrate,
  sixStoryConfig,
} from './support/epic.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  dispatched,
  epicMergeTrailers,
  planBody,
  runJob,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
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

/**
 * The ids say what the scripted coder (support/epic-coder.mjs) does: `handover`'s executor `a`
 * is out of quota (exit 75) and `b` takes over; `retry` crashes in its first attempt.
 */
const STORIES = [{ id: 'handover' }, { id: 'retry', dependsOn: ['handover'] }];

/** The dispatched run of `story#attempt`, started and run as the story workflow's two jobs. */
async function storyJob(epic: number, story: string, attempt: number): Promise<JobRun> {
  const { runId } = dispatchOf(w, epic, story, attempt);
  w.gh.act.startWorkflowRun(runId);
  await w.gh.idle();
  return runJob(w, bundle, {
    name: `${story}-${attempt}`,
    workspace: await checkout(w, `${story}-${attempt}`),
    inputs: storyInputs(w, epic, story, attempt),
    runId,
  });
}

/** The end of that run, delivered to orchestrate mode as the runner hands the event over. */
async function runEnded(
  epic: number,
  story: string,
  attempt: number,
  conclusion: 'success' | 'failure',
): Promise<{ payload: Record<string, unknown>; job: JobRun }> {
  const { runId } = dispatchOf(w, epic, story, attempt);
  w.gh.act.completeWorkflowRun(runId, conclusion);
  const payload = await deliveredPayload(w.gh, 'workflow_run', 'completed', (p) => {
    return (p['workflow_run'] as { id?: unknown }).id === runId;
  });
  const job = await orchestrate(w, bundle, `run-${runId}`, 'workflow_run', payload);
  expect(job.code).toBe(0);
  return { payload, job };
}

async function statuses(epic: number): Promise<string[][]> {
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  return (await store.listStories()).map((r) => [r.story, r.status]);
}

describe('a two-story epic, app-less, from label to a ready pull request', () => {
  it('delivers every story through a handover and /retry', async () => {
    const { epic, job: labeled } = await labelEpic(w, bundle, 'Checkout', planBody(STORIES));
    expect(labeled.code).toBe(0);
    expect(labeled.outputs['status']).toBe('reconciled');
    expect(dispatched(w, epic)).toEqual(['handover#1']);
    expect(botComments(w, epic).some((c) => c.includes('<!-- epicflow:status -->'))).toBe(true);

    // Executor a is out of quota: b takes over, and the job starts the dependent itself.
    const handover = await storyJob(epic, 'handover', 1);
    expect(handover.code).toBe(0);
    expect(handover.outputs['status']).toBe('done');
    expect(handover.stdout).toContain('handover: handed over from a to b');
    expect(handover.outputs['executor']).toBe('a → b');
    expect(dispatched(w, epic)).toEqual(['handover#1', 'retry#1']);
    // The run's end reaches the orchestrate workflow: decided, and nothing dispatched again.
    const ended = await runEnded(epic, 'handover', 1, 'success');
    expect((ended.payload['workflow_run'] as { display_title?: unknown }).display_title).toBe(
      `epicflow epic ${epic} story handover attempt 1`,
    );
    expect(ended.job.outputs['status']).toBe('reconciled');
    expect(dispatched(w, epic)).toEqual(['handover#1', 'retry#1']);
    expect(await statuses(epic)).toEqual([
      ['handover', 'done'],
      ['retry', 'active'],
    ]);

    // The next job skips a (out of quota); its agent crashes: the job fails, the epic waits.
    const failed = await storyJob(epic, 'retry', 1);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(
      '::error::story retry failed: coder turn failed (b): exit code 1 | the agent crashed',
    );
    await runEnded(epic, 'retry', 1, 'failure');
    expect(dispatched(w, epic)).toEqual(['handover#1', 'retry#1']);

    const retried = await commentAs(w, bundle, 'alice', epic, '/retry retry');
    expect(retried.code).toBe(0);
    expect(dispatched(w, epic)).toEqual(['handover#1', 'retry#1', 'retry#2']);
    expect((await storyJob(epic, 'retry', 2)).code).toBe(0);
    await runEnded(epic, 'retry', 2, 'success');
    expect(dispatched(w, epic)).toEqual(['handover#1', 'retry#1', 'retry#2']);

    await expectDelivered(epic);
  }, 720_000);
});

/** What a user sees once the epic is delivered. */
async function expectDelivered(epic: number): Promise<void> {
  const ids = STORIES.map((s) => s.id);
  // Every story's module on the epic branch.
  for (const id of ids) {
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, `src/${id}/index.js`)).toBe(
      `export const story = "${id}";\n`,
    );
  }

  // One merge commit per story on the epic branch, each with its trailers.
  const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
  const merges = await epicMergeTrailers(w, epic, ['Epicflow-Story', 'Epicflow-Executor']);
  expect(merges.map(([story]) => story).sort()).toEqual([...ids].sort());
  expect(Object.fromEntries(merges)).toEqual({ handover: 'a → b', retry: 'b' });

  // The records say how each story got there.
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  const records = new Map((await store.listStories()).map((r) => [r.story, r]));
  for (const id of ids) expect(records.get(id)?.status).toBe('done');
  expect(records.get('handover')?.executors).toEqual(['a', 'b']);
  expect(records.get('handover')?.mergeCommit).toBeDefined();
  expect(records.get('retry')?.attempt).toBe(2);
  // The merge commit recorded is the one on the epic branch.
  expect(records.get('retry')?.mergeCommit).toBe(head);

  // /retry was needed once: a failure comment said what to do, naming the crashed turn's log.
  const failures = w.gh.state
    .comments(OWNER, REPO)
    .filter((c) => c.author === 'epicflow[bot]' && c.body.startsWith('**Story `retry` failed**'));
  expect(failures.map((c) => c.body.split('\n')[0])).toEqual([
    "**Story `retry` failed** (attempt 1): coder turn failed (b): exit code 1 | the agent crashed (log: logs/retry/1-1-coder.log in the job's artifact)",
  ]);
  expect(failures[0]?.body).toContain(`comment \`/retry retry\` on #${epic}`);
  const status = botComments(w, epic).find((c) => c.includes('<!-- epicflow:status -->'));
  expect(status).toContain('**all 2 stories done**');

  // The pull request is ready, and its report names the handover and the retry.
  const pr = await w.repo.findOpenPr(`epic/${epic}`, 'main');
  expect(pr?.draft).toBe(false);
  const report = botComments(w, pr?.number ?? 0).find((c) =>
    c.includes('<!-- epicflow:report -->'),
  );
  expect(report).toContain('- Stories: 2 — 2 done, 0 failed, 0 waiting, 0 active, 0 planned');
  expect(report).toContain('| retried by `@alice` |');
  const byExecutor = report?.split('## By executor')[1]?.split('## Next step')[0] ?? '';
  expect(byExecutor).toContain('| b | 2: handover (a → b), retry |');

  // Sub-issues closed, the board all Done.
  const subs = await w.repo.listSubIssues(epic);
  expect(subs.map((s) => s.state)).toEqual(ids.map(() => 'closed'));
  expect(boardStatus(w.gh)).toEqual(Object.fromEntries(ids.map((id) => [id, 'Done'])));
}
