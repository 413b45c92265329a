/**
 * Driving a whole epic app-less: the test plays the runner. Each event the
 * orchestrate workflow would receive is handed to the bundle in
 * `mode: orchestrate`; each dispatched story is run as a story job of the
 * bundle, and its finished run is delivered back as a `workflow_run` event.
 */
import { agentScript } from './agents.js';
import { expect } from '@jest/globals';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GitHubStateStore } from '../../../src/adapters/github/state-store.js';
import { boardStatus } from '../../app/harness.js';
import type { GitHubDouble } from '../../github-double/index.js';
import {
  OWNER,
  REPO,
  checkout,
  git,
  runJob,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './world.js';

/**
 * The payload of the newest delivery of `event.action` the double sent (whether or not a
 * webhook target listens): generated from GitHub's examples and the double's state, and
 * checked against GitHub's webhook schema, as the runner would hand it to the workflow.
 */
export async function deliveredPayload(
  gh: GitHubDouble,
  event: string,
  action: string,
  match: (payload: Record<string, unknown>) => boolean = () => true,
): Promise<Record<string, unknown>> {
  await gh.idle();
  const found = [...gh.deliveries]
    .reverse()
    .find((d) => d.event === event && d.action === action && match(d.payload));
  if (found === undefined) throw new Error(`the double sent no ${event}.${action} delivery`);
  return found.payload;
}

/** Runs the bundle in orchestrate mode with an event as the runner hands it over. */
export async function orchestrate(
  w: ActionWorld,
  bundle: string,
  name: string,
  event: string,
  payload: unknown,
): Promise<JobRun> {
  const path = join(w.dir, `${name}.json`);
  await writeFile(path, JSON.stringify(payload));
  return runJob(w, bundle, {
    name,
    workspace: w.dir,
    inputs: { mode: 'orchestrate', 'github-token': w.bot.token, 'bot-login': 'epicflow[bot]' },
    env: { GITHUB_EVENT_NAME: event, GITHUB_EVENT_PATH: path },
  });
}

/** A person's comment on the epic, delivered to orchestrate mode. */
export async function commentAs(
  w: ActionWorld,
  bundle: string,
  login: string,
  epic: number,
  body: string,
): Promise<JobRun> {
  const comment = w.gh.act.comment(login, { owner: OWNER, repo: REPO, number: epic, body });
  const payload = await deliveredPayload(
    w.gh,
    'issue_comment',
    'created',
    (p) => (p['comment'] as { id?: unknown }).id === comment['id'],
  );
  return orchestrate(w, bundle, `comment-${Date.now()}`, 'issue_comment', payload);
}

/** Alice opens and labels an epic; the label event goes to orchestrate mode. */
export async function labelEpic(
  w: ActionWorld,
  bundle: string,
  title: string,
  body: string,
): Promise<{ epic: number; job: JobRun }> {
  const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title, body, author: 'alice' });
  w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: issue.number, label: 'epic' });
  const payload = await deliveredPayload(w.gh, 'issues', 'labeled', (p) => {
    return (p['issue'] as { number?: unknown }).number === issue.number;
  });
  const job = await orchestrate(w, bundle, 'labeled', 'issues', payload);
  return { epic: issue.number, job };
}

export interface StoryJobRun extends JobRun {
  readonly story: string;
  readonly attempt: number;
  readonly runId: number;
}

/** Delivers the end of a story job's workflow run, as the runner would. */
export async function runCompleted(
  w: ActionWorld,
  bundle: string,
  runId: number,
  conclusion: 'success' | 'failure' | 'cancelled',
): Promise<JobRun> {
  w.gh.act.completeWorkflowRun(runId, conclusion);
  const payload = await deliveredPayload(w.gh, 'workflow_run', 'completed', (p) => {
    return (p['workflow_run'] as { id?: unknown }).id === runId;
  });
  return orchestrate(w, bundle, `run-${runId}`, 'workflow_run', payload);
}

/** How a finished story run reaches the orchestrator (orchestrate mode here). */
export type RunDelivery = (runId: number, conclusion: 'success' | 'failure') => Promise<void>;

/** App-less: the workflow_run event goes to the bundle in orchestrate mode. */
export function viaOrchestrate(w: ActionWorld, bundle: string): RunDelivery {
  return async (runId, conclusion) => {
    const finished = await runCompleted(w, bundle, runId, conclusion);
    if (finished.code !== 0) {
      throw new Error(`orchestrate on run ${runId} failed:\n${finished.stdout}`);
    }
  };
}

/**
 * Runs every dispatched story job of the epic not run yet, one after another
 * in dispatch order, delivering each finished run, until no new job is
 * dispatched.
 */
export async function runDispatched(
  w: ActionWorld,
  bundle: string,
  epic: number,
  done: Set<number>,
  deliver: RunDelivery,
): Promise<StoryJobRun[]> {
  const runs: StoryJobRun[] = [];
  for (;;) {
    const next = w.gh.state
      .dispatches(OWNER, REPO)
      .find((d) => d.inputs['epic'] === String(epic) && !done.has(d.runId));
    if (next === undefined) return runs;
    done.add(next.runId);
    const story = String(next.inputs['story']);
    const attempt = Number(next.inputs['attempt']);
    w.gh.act.startWorkflowRun(next.runId);
    await w.gh.idle();
    const job = await runJob(w, bundle, {
      name: `${story}-${attempt}`,
      workspace: await checkout(w, `${story}-${attempt}`),
      inputs: storyInputs(w, epic, story, attempt),
      runId: next.runId,
    });
    runs.push({ ...job, story, attempt, runId: next.runId });
    await deliver(next.runId, job.code === 0 ? 'success' : 'failure');
  }
}

const EPIC_CODER = agentScript('epic-coder.mjs');

/**
 * The scripted epic's config: two scripted executors, `a` picked first
 * (lower priority number) and `b` taking over when `a` is out of quota; one
 * fix round; a board.
 */
export function sixStoryConfig(state: string): string {
  const command = (id: string): string => JSON.stringify(['node', EPIC_CODER, state, id]);
  return [
    'executors:',
    ...['a', 'b'].flatMap((id, i) => [
      `  - id: ${id}`,
      '    harness: command',
      `    command: ${command(id)}`,
      '    slots: 4',
      `    priority: ${(i + 1) * 10}`,
    ]),
    'gates: ["node check.mjs"]',
    'fixRounds: 1',
    // The "retry" story's crash is left to a person's /retry here (tests of the automatic
    // retry drop this line).
    'retries: { transient: 0 }',
    `board: { project: "https://github.com/orgs/${OWNER}/projects/1" }`,
    '',
  ].join('\n');
}

/**
 * Four stories in three waves; the ids say what the scripted coder does with them. A
 * story writing outside its perimeter and a fix round are the engine's
 * (test/engine/perimeter.test.ts, test/engine/rounds.test.ts).
 */
export const EPIC = [
  { id: 'cart' },
  { id: 'retry', dependsOn: ['cart'] },
  { id: 'handover' },
  { id: 'docs', dependsOn: ['retry', 'handover'] },
];

/** The bot's comments on an issue or pull request. */
export function botComments(w: ActionWorld, number: number): string[] {
  return w.gh.state
    .comments(OWNER, REPO, number)
    .filter((c) => c.author === 'epicflow[bot]')
    .map((c) => c.body);
}

/** What a user sees once the four-story epic is delivered. */
export async function expectEpicDelivered(w: ActionWorld, epic: number): Promise<void> {
  const ids = EPIC.map((s) => s.id);
  // Every story's module on the epic branch.
  for (const id of ids) {
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, `src/${id}/index.js`)).toBe(
      `export const story = "${id}";\n`,
    );
  }

  // One merge commit per story on the epic branch, each with its trailers.
  const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
  const log = await git(
    w.gh.state.repoDir(OWNER, REPO),
    'log',
    '--first-parent',
    '--merges',
    '--format=%(trailers:key=Epicflow-Story,valueonly,separator=)|%(trailers:key=Epicflow-Executor,valueonly,separator=)',
    head ?? '',
  );
  const merges = log
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split('|').map((x) => x.trim()));
  expect(merges.map(([story]) => story).sort()).toEqual([...ids].sort());
  expect(Object.fromEntries(merges)).toEqual({
    cart: 'a',
    handover: 'a → b',
    retry: 'b',
    docs: 'b',
  });

  // The records say how each story got there.
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  const records = new Map((await store.listStories()).map((r) => [r.story, r]));
  for (const id of ids) expect(records.get(id)?.status).toBe('done');
  expect(records.get('handover')?.executors).toEqual(['a', 'b']);
  expect(records.get('retry')?.attempt).toBe(2);
  // The merge commit recorded is the one on the epic branch.
  const recorded = ids.map((id) => records.get(id)?.mergeCommit);
  expect(recorded.every((sha) => sha !== undefined)).toBe(true);
  expect(records.get('docs')?.mergeCommit).toBe(head);

  // /retry was needed once: a failure comment said what to do.
  const failures = w.gh.state
    .comments(OWNER, REPO)
    .filter((c) => c.author === 'epicflow[bot]' && c.body.startsWith('**Story `retry` failed**'));
  expect(failures.map((c) => c.body.split('\n')[0])).toEqual([
    "**Story `retry` failed** (attempt 1): coder turn failed (b): exit code 1 | the agent crashed (log: logs/retry/1-1-coder.log in the job's artifact)",
  ]);
  expect(failures[0]?.body).toContain(`comment \`/retry retry\` on #${epic}`);
  const status = botComments(w, epic).find((c) => c.includes('<!-- epicflow:status -->'));
  expect(status).toContain('**all 4 stories done**');

  // The pull request is ready, and its report names the handover.
  const pr = await w.repo.findOpenPr(`epic/${epic}`, 'main');
  expect(pr?.draft).toBe(false);
  const report = botComments(w, pr?.number ?? 0).find((c) =>
    c.includes('<!-- epicflow:report -->'),
  );
  expect(report).toContain('- Stories: 4 — 4 done, 0 failed, 0 waiting, 0 active, 0 planned');
  expect(report).toContain('| retried by `@alice` |');
  const byExecutor = report?.split('## By executor')[1]?.split('## Next step')[0] ?? '';
  expect(byExecutor).toContain('| a | 1: cart |');
  expect(byExecutor).toContain('| b | 3: retry, handover (a → b), docs |');

  // Sub-issues closed, the board all Done.
  const subs = await w.repo.listSubIssues(epic);
  expect(subs.map((s) => s.state)).toEqual(ids.map(() => 'closed'));
  expect(boardStatus(w.gh)).toEqual(Object.fromEntries(ids.map((id) => [id, 'Done'])));
}
