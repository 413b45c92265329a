/**
 * `mode: story`: run one story of an epic in this job, record the outcome on
 * GitHub, report it (outputs, job summary, annotations), then let the
 * orchestrator decide what comes next, so dependents start without waiting
 * for the App.
 */
import * as core from '@actions/core';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStateStore, type GitHubRepo } from '../adapters/github/index.js';
import { resolveEnv } from '../core/config/schema.js';
import type { ExecutorConfig } from '../core/config/types.js';
import { jobTitle, type RunOrigin } from '../core/epic/index.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import { formatChain } from '../core/model.js';
import {
  prepareStoryJob,
  recordRefusal,
  runStoryJob,
  type StoryJobInput,
} from '../orchestrator/story-job.js';
import { handleEpicEvent } from '../orchestrator/index.js';
import { agentUser, sameUser, type Untrusted } from '../adapters/process/untrusted.js';
import { connectJob } from './github.js';
import { runLandMode } from './land.js';
import { jobOf, type StoryInputs } from './inputs.js';
import type { RunnerContext } from './runner.js';
import {
  failedGates,
  redact,
  renderFailureSummary,
  renderStorySummary,
  storyHint,
  storyTotals,
} from './summary.js';

export interface StoryModeDeps {
  readonly inputs: StoryInputs;
  readonly runner: RunnerContext;
  readonly env: NodeJS.ProcessEnv;
}

/** Secrets of the configured executors, masked before anything can print them. */
export function maskExecutorSecrets(
  executors: readonly ExecutorConfig[],
  childEnv: NodeJS.ProcessEnv,
  secrets: string[],
): void {
  for (const e of executors) {
    let resolved: Record<string, string> = {};
    try {
      resolved = resolveEnv(e.env, childEnv, `executor "${e.id}"`);
    } catch {
      resolved = {}; // reported by the run itself
    }
    for (const value of Object.values(resolved)) {
      if (value.length < 4) continue;
      core.setSecret(value);
      secrets.push(value);
    }
  }
}

async function writeSummary(markdown: string, secrets: readonly string[]): Promise<void> {
  await core.summary.addRaw(redact(markdown, secrets), true).write();
}

export async function runStoryMode(deps: StoryModeDeps): Promise<void> {
  // `story: land-<n>`: a landing of the default branch into the epic (docs/landing.md).
  if (jobOf(deps.inputs).kind === 'land') return inJobFolder((work) => runLandMode(deps, work));
  return inJobFolder((work) => runStory(deps, work));
}

/**
 * Runs a job's work in a folder of its own, epicflow's, made for this job (not the
 * runner's `_temp`, which holds the step's file commands and scripts): its records, and
 * the trees and homes untrusted code is handed, live there. Removed when the job ends.
 */
export async function inJobFolder<T>(work: (folder: string) => Promise<T>): Promise<T> {
  const folder = await mkdtemp(join(tmpdir(), 'epicflow-job-'));
  // Others may pass through to what they are handed inside, never list it.
  await chmod(folder, 0o711);
  try {
    return await work(folder);
  } finally {
    await rm(folder, { recursive: true, force: true }).catch((e: unknown) =>
      core.warning(`could not remove ${folder}: ${describeError(e)}`),
    );
  }
}

async function runStory({ inputs, runner, env }: StoryModeDeps, work: string): Promise<void> {
  const { gh, remote, childEnv, defaultBranch } = await connectJob(inputs, runner, env);
  const { repo, secrets } = gh;
  const job: StoryJobInput = {
    epic: Number(inputs.epic),
    story: inputs.story,
    attempt: inputs.attempt,
    configPath: inputs.config,
    ...(defaultBranch === undefined ? {} : { defaultBranch }),
    repo,
    remote,
    workspace: runner.workspace,
    tempDir: work,
    // The runner's temp folder outlives this step: the workflow uploads it as an artifact.
    logsDir: join(
      runner.tempDir,
      'epicflow-logs',
      `epic-${inputs.epic}-${inputs.story}-${inputs.attempt}`,
    ),
    env: childEnv,
    onEvent: (e) => core.info(`${e.story === undefined ? 'epic' : e.story}: ${e.message}`),
  };
  const store = new GitHubStateStore({ repo, epic: inputs.epic });
  const title = `story \`${inputs.story}\` of epic #${inputs.epic} did not run`;

  let prepared;
  let untrusted: Untrusted;
  try {
    // Before anything of the repository is read: no credential may be in reach of what runs.
    untrusted = await isolateUntrusted(inputs, work, childEnv);
    prepared = await prepareStoryJob({ ...job, untrusted });
  } catch (e) {
    await refuse(e, { store, inputs, title, secrets });
    return;
  }
  maskExecutorSecrets(prepared.config.executors, childEnv, secrets);
  let result;
  try {
    result = await core.group(`epicflow: story ${inputs.story}`, () =>
      runStoryJob({ ...job, untrusted }, prepared),
    );
  } catch (e) {
    await refuse(e, {
      store,
      inputs,
      title: `story \`${inputs.story}\` of epic #${inputs.epic} failed`,
      secrets,
    });
    return;
  }
  const { record } = result;
  const totals = storyTotals(record);
  core.setOutput('status', record.status);
  core.setOutput('merge-sha', record.mergeCommit ?? '');
  core.setOutput('executor', formatChain(record.executors));
  core.setOutput('tokens', String(totals.tokens));
  core.setOutput('cost', totals.priced ? totals.costUsd.toFixed(4) : '');
  const logsKept = job.logsDir !== undefined && existsSync(job.logsDir);
  if (logsKept) core.setOutput('logs', job.logsDir);
  await writeSummary(
    renderStorySummary({
      epic: Number(inputs.epic),
      result,
      judged: prepared.config.judge !== undefined,
      repoUrl: `${runner.serverUrl}/${runner.owner}/${runner.repo}`,
      isolation: untrusted,
      hint: storyHint(result),
      logsKept,
    }),
    secrets,
  );
  for (const g of failedGates(result.gates).slice(0, 9)) {
    core.error(
      redact(
        `${g.command} ${g.timedOut ? 'timed out' : 'failed'} on the ${g.where === 'story' ? 'story branch' : 'merged epic tree'}`,
        secrets,
      ),
      {
        title: `epicflow gate failed: ${g.command}`,
      },
    );
  }
  if (record.status !== 'done') {
    core.setFailed(
      redact(
        `story ${inputs.story} ${record.status}: ${record.reason ?? 'no reason recorded'}`,
        secrets,
      ),
    );
  }
  await reconcileAfter({
    repo,
    runner,
    defaultBranch,
    title: jobTitle(jobOf(inputs)),
    conclusion: record.status === 'done' ? 'success' : 'failure',
  });
}

/**
 * The agent, setup, gates and the judge's tools run as a separate unprivileged user
 * (`agent-user`, created when missing): they cannot read this process's token or the
 * App's key. Where that user cannot be had, the job refuses — unless the workflow says
 * `allow-unisolated-agent: true`, and the summary then says what that means.
 */
export async function isolateUntrusted(
  inputs: Pick<StoryInputs, 'agentUser' | 'allowUnisolatedAgent'>,
  /** The job's own folder (`inJobFolder`): what the agent is handed lives under it. */
  work: string,
  env: NodeJS.ProcessEnv,
): Promise<Untrusted> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) base[k] = v;
  try {
    const untrusted = await agentUser({
      user: inputs.agentUser,
      roots: [work],
      home: join(work, 'agent-homes'),
      env: base,
    });
    core.info(`epicflow: untrusted code runs ${untrusted.description}`);
    return untrusted;
  } catch (e) {
    if (!isEpicflowError(e, 'isolation') || inputs.allowUnisolatedAgent !== 'true') throw e;
    core.warning(
      `the agent runs as the runner's own user and can read this job's credentials: ${describeError(e)} (allow-unisolated-agent: true)`,
      { title: 'epicflow: agent not isolated' },
    );
    return sameUser();
  }
}

async function refuse(
  e: unknown,
  ctx: { store: GitHubStateStore; inputs: StoryInputs; title: string; secrets: readonly string[] },
): Promise<void> {
  const message = redact(describeError(e), ctx.secrets);
  const reason = message
    .split('\n')
    .map((l) => l.trim())
    .join(' | ');
  try {
    await recordRefusal(
      ctx.store,
      {
        kind: 'story',
        epic: Number(ctx.inputs.epic),
        story: ctx.inputs.story,
        attempt: ctx.inputs.attempt,
      },
      reason,
      new Date(),
    );
  } catch (w) {
    core.warning(redact(`could not record the failure: ${describeError(w)}`, ctx.secrets));
  }
  await writeSummary(renderFailureSummary({ title: ctx.title, message }), ctx.secrets);
  core.setOutput('status', 'failed');
  core.setFailed(message);
  if (!isEpicflowError(e)) core.debug(String((e as Error).stack ?? e));
}

/**
 * Where this job's own run came from, as the runner says: the orchestrator then need
 * not read the run to know it is a story run. Absent when the runner did not say it
 * all (the orchestrator reads the run from GitHub then).
 */
function runOrigin(runner: RunnerContext): { origin?: RunOrigin; repositoryId?: number } {
  const { eventName, refName, repositoryId, workflowPath } = runner;
  if (eventName === undefined || refName === undefined || repositoryId === undefined) return {};
  if (workflowPath === undefined) return {};
  const self = { id: repositoryId, fullName: `${runner.owner}/${runner.repo}` };
  return {
    origin: {
      event: eventName,
      path: workflowPath,
      headBranch: refName,
      repository: self,
      // A dispatch runs this repository's own branch; any other event may not.
      headRepository: eventName === 'workflow_dispatch' ? self : null,
    },
    repositoryId,
  };
}

/**
 * The orchestrator's own decision for "this story's run finished" — the same
 * code the App runs — so dependents are dispatched now. Best effort: the App
 * (or the orchestrate workflow) makes the same decision when the run completes.
 */
export async function reconcileAfter(input: {
  repo: GitHubRepo;
  runner: RunnerContext;
  defaultBranch: string | undefined;
  /** This run's title, as the story workflow's `run-name` makes it. */
  title: string;
  conclusion: string;
}): Promise<void> {
  const { runner, defaultBranch } = input;
  if (runner.runId === undefined || runner.workflowPath === undefined) {
    core.info('no run id or workflow path: the next stories start when this run completes');
    return;
  }
  try {
    const result = await handleEpicEvent(
      {
        repo: input.repo,
        ...(defaultBranch === undefined ? {} : { defaultBranch }),
        storyWorkflow: runner.workflowPath.split('/').pop() ?? runner.workflowPath,
        log: { info: (m) => core.info(m), warn: (m) => core.warning(m) },
        // Beside the event's decider: it creates the sub-issues (no two at once).
        createsSubIssues: false,
      },
      {
        kind: 'workflow-run',
        runId: runner.runId,
        workflowPath: runner.workflowPath,
        displayTitle: input.title,
        conclusion: input.conclusion,
        ...runOrigin(runner),
      },
    );
    core.info(
      result.dispatched.length > 0
        ? `dispatched ${result.dispatched.join(', ')}`
        : `reconciled: ${result.outcome}${result.reason === undefined ? '' : ` (${result.reason})`}`,
    );
  } catch (e) {
    core.warning(
      `could not start the next stories now (${describeError(e)}); they start when this run completes`,
    );
  }
}
