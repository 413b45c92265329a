/**
 * A story's two jobs called in-process, as the Action's shell calls them (src/jobs/github/story-kind.ts),
 * against the GitHub double and real git: the work job (`prepareStoryJob`, `runStoryJob`) on a
 * checkout, and the publish job (`prepareStoryJob`, `publishStoryJob`, the record saved by
 * `saveRecord` after the push `makePush` makes) on an empty folder with the work job's result. No bundle, no agent user: the agents run as the tests' user. What
 * the shell adds (inputs, isolation, outputs, summary, a refusal recorded) is tested where the
 * bundle runs (test/action/story.test.ts).
 */
import { expect } from '@jest/globals';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RemoteGit } from '../../../src/adapters/git/remote-git.js';
import type { GitHubRepo } from '../../../src/adapters/github/repo.js';
import { botCommitIdentity } from '../../../src/core/epic/index.js';
import { describeError } from '../../../src/core/errors.js';
import {
  storyRecord,
  runStoryJob,
  type PreparedStory,
  type StoryJobInput,
  type StoryJobResult,
} from '../../../src/jobs/github/story-job.js';
import { makePush, Pushing } from '../../../src/jobs/github/job-push.js';
import { prepareJob, preparation, saveRecord } from '../../../src/jobs/github/job-record.js';
import { publishStoryJob, type PublishJobResult } from '../../../src/jobs/github/story-publish.js';
import { checkout, dispatchOf, OWNER, REPO, type ActionWorld } from '../../action/support/world.js';

export const CONFIG_PATH = '.github/epicflow.yml';

export interface JobOptions {
  readonly attempt?: number;
  /** The job's name (its folders); `<story>-<epic>-<attempt>` by default. */
  readonly name?: string;
  /** The environment children start from (the worker's by default). */
  readonly env?: NodeJS.ProcessEnv;
  /** The repository as the job reaches it (the world's bot by default). */
  readonly repo?: GitHubRepo;
}

function remoteGit(w: ActionWorld, cwd: string): RemoteGit {
  return new RemoteGit({
    cwd,
    serverUrl: w.gh.url,
    repository: `${OWNER}/${REPO}`,
    token: w.bot.token,
    identity: botCommitIdentity(w.repo.botLogin),
  });
}

/** What a job refused with, as the job summary and the record say it. */
export async function refusal(p: Promise<unknown>): Promise<string> {
  const e: unknown = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeDefined();
  return describeError(e);
}

/** A work job's input on a fresh checkout, as the shell gives it. */
export async function workInput(
  w: ActionWorld,
  epic: number,
  story: string,
  options: JobOptions = {},
): Promise<StoryJobInput> {
  const name = options.name ?? `${story}-${epic}-${options.attempt ?? 1}`;
  const workspace = await checkout(w, name);
  const tempDir = join(w.dir, 'jobs', name, 'temp');
  await mkdir(tempDir, { recursive: true });
  return {
    epic,
    configPath: CONFIG_PATH,
    repo: options.repo ?? w.repo,
    workspace,
    tempDir,
    env: options.env ?? process.env,
    story,
    attempt: options.attempt ?? 1,
    remote: remoteGit(w, workspace),
    resultDir: join(tempDir, 'epicflow-result'),
    // Nothing scrubbed yet: the work job's shell scrubs the checkout before its work runs.
    scrubbed: [],
  };
}

/**
 * What a story job reads and checks before anything changes, as the Action's shell prepares
 * it: the job opened, the story's record found and refused when stale, then the rest.
 */
export function prepareStoryJob(input: StoryJobInput): Promise<PreparedStory> {
  const { epic, story, attempt } = input;
  return prepareJob({ kind: 'story', epic, story, attempt }, preparation(input, storyRecord));
}

/**
 * The work job: read and checked on GitHub, then, as the Action's shell runs it, the
 * checkout's credentials scrubbed and the story run; its result handed over.
 */
export async function workJob(input: StoryJobInput): Promise<StoryJobResult> {
  const prepared = await prepareStoryJob(input);
  return runStoryJob({ ...input, scrubbed: await input.remote.scrubCredentials() }, prepared);
}

/**
 * The publish job of a work job's result: checked again, merged, pushed and recorded.
 * `meanwhile`: what happens on GitHub after the job prepared, before its work. `workOutcome`:
 * how the work job ended, as the workflow tells the publish job (`needs.work.result`):
 * `cancelled` for a work job killed before it handed anything over.
 */
export async function publishJob(
  w: ActionWorld,
  work: StoryJobInput,
  onEvent?: (message: string) => void,
  meanwhile?: () => Promise<void>,
  workOutcome = 'success',
): Promise<PublishJobResult> {
  const folder = join(w.dir, 'jobs', `${work.workspace.split('/').pop() ?? ''}-publish`);
  const workspace = join(folder, 'workspace');
  const tempDir = join(folder, 'temp');
  await mkdir(workspace, { recursive: true });
  await mkdir(tempDir, { recursive: true });
  const input: StoryJobInput = {
    ...work,
    workspace,
    tempDir,
    remote: remoteGit(w, workspace),
  };
  const prepared = await prepareStoryJob(input);
  await meanwhile?.();
  const ending = await publishStoryJob(
    {
      epic: work.epic,
      story: work.story,
      attempt: work.attempt,
      resultDir: work.resultDir,
      workOutcome,
      configPath: CONFIG_PATH,
      tempDir,
      remote: input.remote,
      botLogin: w.repo.botLogin,
      secrets: [w.bot.token],
      ...(onEvent === undefined ? {} : { onEvent }),
    },
    prepared,
  );
  // The merge pushed and the record saved as the shell pushes and saves them.
  const ended = ending instanceof Pushing ? await makePush(ending) : ending;
  return (await saveRecord(ended, storyRecord.lostSave)).result;
}

/** Both jobs of one story, one after the other. */
export async function storyJobs(
  w: ActionWorld,
  epic: number,
  story: string,
  options: JobOptions = {},
): Promise<{ work: StoryJobResult; publish: PublishJobResult }> {
  const input = await workInput(w, epic, story, options);
  const work = await workJob(input);
  return { work, publish: await publishJob(w, input) };
}

/**
 * The dispatched run of `story#attempt` run to its end, as the runner and GitHub would: the
 * run started, its work job and its publish job (their logs kept for the run's artifact, as
 * the shell keeps them: answers name the log), the record they leave `status`, the run
 * completed.
 */
export async function runDispatchedStory(
  w: ActionWorld,
  epic: number,
  story: string,
  attempt: number,
  status: 'done' | 'failed' = 'done',
): Promise<void> {
  const { runId } = dispatchOf(w, epic, story, attempt);
  w.gh.act.startWorkflowRun(runId);
  await w.gh.idle();
  const input = await workInput(w, epic, story, { attempt });
  const logged = { ...input, logsDir: join(input.tempDir, 'epicflow-logs') };
  const work = await workJob(logged);
  const publish = await publishJob(w, logged);
  const reason = publish.record.status === status ? '' : (publish.record.reason ?? '');
  expect({
    story,
    attempt,
    work: work.record.status,
    status: publish.record.status,
    reason,
  }).toEqual({ story, attempt, work: status, status, reason: '' });
  w.gh.act.completeWorkflowRun(runId, 'success');
  await w.gh.idle();
}
