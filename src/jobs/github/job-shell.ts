/**
 * What every job of the story workflow reads first on GitHub, whatever it runs (a
 * story, a planning attempt, a retro, a landing): the epic's view in one request (the
 * configuration on the default branch, the issue with its sub-issues, every record
 * with its blob sha), the configuration parsed, and the epic's state store. The shell then
 * finds the kind's record in it and checks it against `jobStaleness` (job-record.ts); a
 * refusal is recorded by the kind, as the Action's shell asks it (`JobKind.refuse`, job-kind.ts).
 */
import { ACTION_ANSWER_KEY } from '../../core/judge/index.js';
import { GitHubStateStore, type EpicView, type GitHubRepo } from '../../adapters/github/index.js';
import { statusOf } from '../../adapters/github/errors.js';
import { join } from 'node:path';
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import { Git } from '../../adapters/git/index.js';
import { TOKEN_REFUSED_HINT } from '../../adapters/git/remote-git.js';
import type { Untrusted } from '../../adapters/process/untrusted.js';
import { executorLookup, resolveExecutorEnvs } from '../../composition/epic.js';
import { planningGit } from '../../composition/planning-tree.js';
import { commitDetectionFiles } from '../../adapters/repo/detection-files.js';
import { parseConfig } from '../../core/config/index.js';
import { leftToDetection, withDetected, type LeftToDetection } from '../../core/init/index.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import { botCommitIdentity } from '../../core/epic/index.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan } from '../../core/model.js';
import { planOptionsFor } from '../../core/plan/index.js';
import type { PlanningGit } from '../../engine/plan-epic.js';
import type { ExecutorLookup } from '../../engine/ports.js';
import { loadPlan, readView } from '../../orchestrator/load.js';

/** What every job kind is given (each kind's input adds its own ids and hooks). */
export interface JobInput {
  readonly epic: number;
  /** Path of the configuration on the default branch. */
  readonly configPath: string;
  /** The repository's default branch when the caller knows it (spares a read). */
  readonly defaultBranch?: string | undefined;
  readonly repo: GitHubRepo;
  /** The job checkout (`GITHUB_WORKSPACE`): never handed to untrusted code. */
  readonly workspace: string;
  /**
   * The job's own folder (epicflow's): its records, and the trees and homes untrusted
   * code is handed, live under it.
   */
  readonly tempDir: string;
  /** The environment executors' `${VAR}` and children start from — without the GitHub token. */
  readonly env: NodeJS.ProcessEnv;
  /** Where agents, setup, gates and helpers run (a separate user in the Action). */
  readonly untrusted?: Untrusted | undefined;
  /**
   * The credentials the job's shell removed from the checkout's git config before the work
   * ran (`RemoteGit.scrubCredentials`; none yet while the job prepares): the work says them
   * once its events flow (`sayScrubbed`).
   */
  readonly scrubbed: readonly string[];
  /**
   * Aborted when the runner cancels the step (SIGINT, then SIGTERM): the work stops at its
   * next checkpoint, ends what it started and hands over what is done.
   */
  readonly interrupt?: AbortSignal | undefined;
}

/**
 * A job on a checkout of the default branch that pushes nothing (planning, retro): one
 * executor reads a read-only worktree of it.
 */
export interface CheckoutJobInput extends JobInput {
  readonly attempt: number;
  readonly onEvent?: (message: string) => void;
  readonly now?: () => Date;
  /** How the executor adapters run their CLIs (tests). */
  readonly executorDeps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices' | 'untrusted'> | undefined;
}

/** What a job is given to open itself. */
export type JobOpening = Pick<JobInput, 'repo' | 'epic' | 'configPath' | 'defaultBranch'>;

/** A job opened: everything each kind reads before it checks its own record. */
export interface OpenedJob {
  readonly defaultBranch: string;
  readonly view: EpicView;
  /** As the file says: what it leaves out is detected on the commit a job works on (`configAt`). */
  readonly config: EpicflowConfig;
  /** What the configuration leaves to detection. */
  readonly left: LeftToDetection;
  readonly issue: NonNullable<EpicView['issue']>;
  readonly store: GitHubStateStore;
}

/** Reads the epic's view and configuration; refuses clearly when either is missing. */
export async function openJob(input: JobOpening): Promise<OpenedJob> {
  const { repo, epic, configPath } = input;
  const { defaultBranch, view } = await readJobView(input);
  if (view.configText === null) {
    throw new EpicflowError(
      'config',
      `no epicflow config at ${configPath} on the default branch of ${repo.fullName}`,
      { details: ['add the file (see docs/config.md), or point the "config" input at it'] },
    );
  }
  const config = parseConfig(view.configText, configPath);
  if (view.issue === undefined) {
    throw new EpicflowError('github', `GitHub: epic #${epic} of ${repo.fullName} does not exist`);
  }
  const store = new GitHubStateStore({ repo, epic: String(epic), defaultBranch });
  const left = leftToDetection(view.configText);
  return { defaultBranch, view, config, left, issue: view.issue, store };
}

/**
 * The configuration a job runs stories and checks with: what it leaves out (gates,
 * setup, packages) detected in `commit`'s files, read from git's objects, as the local
 * commands detect it in the working tree.
 */
export async function configAt(
  config: EpicflowConfig,
  left: LeftToDetection,
  git: Git,
  commit: string,
): Promise<EpicflowConfig> {
  if (!left.gates && !left.packages) return config;
  return withDetected(config, left, await commitDetectionFiles(git, commit));
}

/** The view in one request; a token GitHub refuses is said to be one. */
async function readJobView(
  input: JobOpening,
): Promise<{ readonly defaultBranch: string; readonly view: EpicView }> {
  const { repo, epic } = input;
  try {
    const defaultBranch = input.defaultBranch ?? (await repo.defaultBranch());
    return { defaultBranch, view: await readView(repo, epic, defaultBranch, input.configPath) };
  } catch (e) {
    // `attempt` wraps Octokit's failure: GitHub's status is on its cause.
    if ((statusOf(e) ?? statusOf((e as { cause?: unknown }).cause)) !== 401) throw e;
    throw new EpicflowError(
      'github',
      `GitHub refused the token while reading epic #${epic} of ${repo.fullName}`,
      { details: [TOKEN_REFUSED_HINT], cause: e },
    );
  }
}

/** A folder of the job's own for its epic's work (`<tempDir>/epicflow/<epic>/<parts>`). */
export function jobFolder(input: Pick<JobInput, 'tempDir' | 'epic'>, ...parts: string[]): string {
  return join(input.tempDir, 'epicflow', String(input.epic), ...parts);
}

/** Where the job's setup cache lives, apart from any one epic's folder. */
export function setupCacheFolder(input: Pick<JobInput, 'tempDir'>): string {
  return join(input.tempDir, 'epicflow', 'cache', 'setup');
}

/** Says which credentials the scrub took from the checkout's git config (nothing: none). */
export function sayScrubbed(removed: readonly string[], say: (message: string) => void): void {
  if (removed.length > 0) {
    say(`removed credentials from the checkout's git config: ${removed.join(', ')}`);
  }
}

/**
 * The job checkout as a job that commits takes it: detached (its own branch is left alone:
 * the job works on detached and local refs), committing as the bot.
 */
export async function detachedCheckout(input: Pick<JobInput, 'workspace' | 'repo'>): Promise<Git> {
  const git = await Git.open(input.workspace, botCommitIdentity(input.repo.botLogin));
  await git.read('cannot detach the job checkout', ['checkout', '--quiet', '--detach']);
  return git;
}

/** A checkout job's tools: its executor reads `base` on a read-only worktree, under `folder`. */
interface OpenedCheckout {
  /** The commit the checkout holds. */
  readonly base: string;
  /** The job's folder for this work (the tree and the executors' homes live under it). */
  readonly folder: string;
  readonly git: PlanningGit;
  readonly executors: ExecutorLookup;
}

/**
 * The job checkout (its credentials scrubbed by the shell before anything of it runs: said
 * here), the commit it holds, and the executors as the job's untrusted user runs them.
 */
export async function openCheckout(
  input: CheckoutJobInput,
  config: EpicflowConfig,
  /** The work's folder name under the job's epic folder (`planning`, `retro`). */
  work: string,
  emit: (message: string) => void,
): Promise<OpenedCheckout> {
  sayScrubbed(input.scrubbed, emit);
  const git = await Git.open(input.workspace);
  const base = await git.revParse('HEAD');
  if (base === null) throw new EpicflowError('git', 'the job checkout has no HEAD commit');
  const folder = jobFolder(input, work);
  return {
    base,
    folder,
    git: planningGit(git, join(folder, 'tree')),
    executors: executorLookup({
      config,
      env: input.env,
      untrusted: input.untrusted,
      deps: input.executorDeps,
    }),
  };
}

/** What a job hands the epic's composition (`composeEpic`) from its input. */
export function composedFrom(
  input: JobInput,
  config: EpicflowConfig,
): {
  readonly configPaths: readonly string[];
  readonly executorEnv: ReturnType<typeof resolveExecutorEnvs>;
  readonly env: NodeJS.ProcessEnv;
  readonly untrusted: Untrusted | undefined;
  readonly answerKey: Uint8Array;
} {
  return {
    configPaths: planOptionsFor(config, input.configPath).configPaths,
    executorEnv: resolveExecutorEnvs(config.executors, input.env),
    env: input.env,
    untrusted: input.untrusted,
    // The records are on the state branch, written only with the job's write credential.
    answerKey: ACTION_ANSWER_KEY,
  };
}

/** The epic's plan as every decision reads it (sub-issues included); an invalid one refuses. */
export async function jobPlan(input: JobOpening, opened: OpenedJob): Promise<Plan> {
  return (await jobPlanWithIssues(input, opened)).plan;
}

/**
 * The plan as `jobPlan` reads it, with each story's sub-issue number (a story without one is
 * missing), found as a decision finds them through `repo` (the epic's owner counts as ours).
 */
export async function jobPlanWithIssues(
  input: JobOpening,
  opened: OpenedJob,
  repo: GitHubRepo = input.repo,
): Promise<{ plan: Plan; subIssues: Readonly<Record<string, number>> }> {
  const { epic } = input;
  const load = await loadPlan(repo, { number: epic, body: opened.issue.body }, opened.config, {
    subIssues: opened.issue.subIssues,
    configFile: input.configPath,
  });
  if (!load.ok) {
    throw new EpicflowError('plan', `the plan of epic #${epic} is not valid`, {
      details: load.violations.map((v) => `${v.code}: ${v.message}`),
    });
  }
  const subIssues = Object.fromEntries(
    Object.entries(load.subIssues).map(([id, s]) => [id, s.number]),
  );
  return { plan: load.plan, subIssues };
}
