/**
 * Driving a whole epic app-less: the test plays the runner. Each event the
 * orchestrate workflow would receive is handed to the bundle in
 * `mode: orchestrate`; each dispatched story is run as a story job of the
 * bundle, and its finished run is delivered back as a `workflow_run` event.
 */
import { agentScript } from './agents.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { handleEpicEvent, toEpicEvent } from '../../../src/orchestrator/index.js';
import type { GitHubDouble } from '../../github-double/index.js';
import {
  OWNER,
  REPO,
  checkout,
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

/**
 * The newest delivery of `event.action` that `match`es, decided by the orchestrator in this
 * process, as the App and orchestrate mode decide it (`toEpicEvent`, `handleEpicEvent`):
 * for tests whose rule is not orchestrate mode's own (its runs are epic-appless.test.ts's).
 */
export async function decideInProcess(
  w: Pick<ActionWorld, 'gh' | 'repo'>,
  event: string,
  action: string,
  match: (payload: Record<string, unknown>) => boolean,
): ReturnType<typeof handleEpicEvent> {
  const payload = await deliveredPayload(w.gh, event, action, match);
  const epicEvent = toEpicEvent(event, payload);
  if (epicEvent === null) throw new Error(`not an epic event: ${event}.${action}`);
  return handleEpicEvent({ repo: w.repo }, epicEvent);
}

/** The runner reports run `runId` ended with `conclusion`; decided in-process. */
export async function runEndedInProcess(
  w: Pick<ActionWorld, 'gh' | 'repo'>,
  runId: number,
  conclusion: 'success' | 'failure' | 'cancelled',
): ReturnType<typeof handleEpicEvent> {
  w.gh.act.completeWorkflowRun(runId, conclusion);
  return decideInProcess(w, 'workflow_run', 'completed', (p) => {
    return (p['workflow_run'] as { id?: unknown }).id === runId;
  });
}

/** `login` comments `body` on the epic; decided in-process. */
export async function commentInProcess(
  w: Pick<ActionWorld, 'gh' | 'repo'>,
  login: string,
  epic: number,
  body: string,
): ReturnType<typeof handleEpicEvent> {
  const comment = w.gh.act.comment(login, { owner: OWNER, repo: REPO, number: epic, body });
  return decideInProcess(w, 'issue_comment', 'created', (p) => {
    return (p['comment'] as { id?: unknown }).id === comment['id'];
  });
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
    'gates: ["sh check.sh"]',
    'fixRounds: 1',
    // The "retry" story's crash is left to a person's /retry here (tests of the automatic
    // retry drop this line).
    'retries: { transient: 0 }',
    `board: { project: "https://github.com/orgs/${OWNER}/projects/1" }`,
    '',
  ].join('\n');
}

/** The bot's comments on an issue or pull request. */
export function botComments(w: ActionWorld, number: number): string[] {
  return w.gh.state
    .comments(OWNER, REPO, number)
    .filter((c) => c.author === 'epicflow[bot]')
    .map((c) => c.body);
}
