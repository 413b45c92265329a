/**
 * The steps of the job shell (shell.ts) every job of the story workflow takes the same
 * way, whatever it runs: its own folder, the untrusted user its agents run as, the
 * executors' secrets masked, and the orchestrator's decision after it.
 */
import * as core from '@actions/core';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitHubRepo } from '../adapters/github/index.js';
import { ownKeyring } from '../adapters/process/keyring.js';
import { sandbox, SandboxUnavailable, type Sandbox } from '../adapters/process/sandbox.js';
import { agentUser, sameUser, type Untrusted } from '../adapters/process/untrusted.js';
import { chooseAgentUser } from '../core/agent-user.js';
import { resolveEnv } from '../core/config/schema.js';
import type { ExecutorConfig } from '../core/config/types.js';
import type { RunOrigin } from '../core/epic/index.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import { handleEpicEvent } from '../orchestrator/index.js';
import type { StoryInputs } from './inputs.js';
import type { RunnerContext } from './runner.js';

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

/**
 * Where the agent, setup, gates and the judge's tools run: inside the kernel sandbox as the
 * runner's own user (it sees no process, file or environment of this job's: the kernel's
 * walls), unless the runner is root or the workflow names an `agent-user`; as a separate
 * unprivileged user (created when missing) where the runner is root or the sandbox cannot
 * run, so they cannot read this process's token or the App's key. Where that user cannot be
 * had, the job refuses — unless the workflow says `allow-unisolated-agent: true`, and the
 * summary then says what that means.
 */
export async function isolateUntrusted(
  inputs: Pick<StoryInputs, 'agentUser' | 'allowUnisolatedAgent' | 'sandbox'>,
  /** The job's own folder (`inJobFolder`): what the agent is handed lives under it. */
  work: string,
  env: NodeJS.ProcessEnv,
): Promise<Untrusted> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) base[k] = v;
  let walls: Sandbox | undefined;
  try {
    // Hidden even inside a folder a step may read (a tool folder on PATH that holds them):
    // the job's folder (trees, homes), the runner's temp folder (the step's file commands:
    // GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH), and the checkout's git folder, where a step
    // in one of its linked trees gets a repository of its own instead.
    const hidden = [work, ...(base['RUNNER_TEMP'] ? [base['RUNNER_TEMP']] : [])];
    const repository = base['GITHUB_WORKSPACE']
      ? join(base['GITHUB_WORKSPACE'], '.git')
      : undefined;
    if (inputs.sandbox === 'true') {
      walls = await sandbox(base, join(work, 'sandbox'), hidden, repository);
    }
  } catch (e) {
    if (!(e instanceof SandboxUnavailable)) throw e;
    core.warning(
      `${describeError(e)} — the agent, setup and gates run as the agent user without the kernel's walls (their own processes, files and namespaces)`,
      { title: 'epicflow: no kernel sandbox' },
    );
  }
  const { user } = chooseAgentUser(
    inputs.agentUser,
    process.getuid?.() === 0,
    walls !== undefined,
    'agent-user',
  );
  let untrusted: Untrusted;
  if (user === undefined) {
    untrusted = sameUser(walls);
  } else {
    try {
      untrusted = await agentUser({
        user,
        roots: [work],
        home: join(work, 'agent-homes'),
        env: base,
        ...(walls === undefined ? {} : { sandbox: walls }),
      });
    } catch (e) {
      if (!isEpicflowError(e, 'isolation') || inputs.allowUnisolatedAgent !== 'true') throw e;
      core.warning(
        `the agent runs as the runner's own user and can read this job's credentials: ${describeError(e)} (allow-unisolated-agent: true)`,
        { title: 'epicflow: agent not isolated' },
      );
      return sameUser(walls);
    }
  }
  core.info(`epicflow: untrusted code runs ${untrusted.description}`);
  const keyring = await ownKeyring();
  if (keyring.note !== undefined) {
    core.warning(keyring.note, { title: 'epicflow: no keyring of its own' });
  }
  return untrusted;
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
