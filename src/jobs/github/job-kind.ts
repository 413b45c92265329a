/**
 * What a kind of GitHub job is, as the job shell runs it (action/shell.ts): one object per
 * kind (`JobKind`: a story's attempt, a planning attempt, a retro, a landing), which gives
 * the recipe of each of its jobs (`JobRecipe`: the work job and the publish job) and how a
 * job of it that could not run is refused. A recipe says only what differs: what it reads
 * before anything changes (its record steps, job-record.ts), its work, and its report. The
 * shell does the rest once for every kind: the job's folder, the GitHub connection, the
 * untrusted user, the staleness check, the credentials scrubbed from the checkout, the push
 * a publish job describes, the record's save, the refusal and the report's writing.
 *
 * Adding a kind: its `JobRef` arm (core/epic/job-ref.ts, with its staleness rule), one file
 * here with its `JobKind` (and its job code), and one line in `KINDS` (kinds.ts).
 */
import { join } from 'node:path';
import type { GitHubRepo } from '../../adapters/github/index.js';
import type { RemoteGit } from '../../adapters/git/remote-git.js';
import type { Untrusted } from '../../adapters/process/untrusted.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import type { JobRef } from '../../core/epic/index.js';
import { EpicflowError } from '../../core/errors.js';
import type { Preparation, Saving } from './job-record.js';
import type { Pushing } from './job-push.js';
import type { JobInput } from './job-shell.js';

/** What of the job's inputs a kind reads. */
export interface KindInputs {
  /** The configuration file's path in the repository. */
  readonly config: string;
  /** The result folder the workflow names (none: the runner's temp folder's). */
  readonly result?: string | undefined;
  /** How the work job ended (`needs.work.result`), for the publish job's reasons. */
  readonly workOutcome?: string | undefined;
}

/** What of the runner a kind reads. */
export interface KindRunner {
  readonly owner: string;
  readonly repo: string;
  readonly serverUrl: string;
  readonly workspace: string;
  readonly tempDir: string;
  readonly workflowPath: string | undefined;
  readonly eventName: string | undefined;
}

/** A job opened by the shell: what a recipe's steps are given. */
export interface GitHubJob {
  readonly inputs: KindInputs;
  readonly runner: KindRunner;
  readonly env: NodeJS.ProcessEnv;
  readonly repo: GitHubRepo;
  readonly remote: RemoteGit;
  /** The environment executors and children start from: no credential in it. */
  readonly childEnv: NodeJS.ProcessEnv;
  /** From the event payload when it says (spares a read). */
  readonly defaultBranch: string | undefined;
  /** The job's own folder. */
  readonly work: string;
  readonly untrusted: Untrusted;
  /** Every credential of the job so far (masked; what is written out is redacted with it). */
  readonly secrets: readonly string[];
  /** What the shell removed from the checkout's git config before the work ran (none yet while it prepares). */
  readonly scrubbed: readonly string[];
  /** Aborted when the runner cancels the step (SIGINT, then SIGTERM). */
  readonly interrupt?: AbortSignal | undefined;
  /** A line of the job's log. */
  log(message: string): void;
}

/** What a job shows when it ran: the shell writes it, redacted. */
export interface JobReport {
  readonly outputs: Readonly<Record<string, string>>;
  /** The job summary (markdown). */
  readonly summary: string;
  /** Error annotations, shown on the run. */
  readonly errors?: readonly { readonly message: string; readonly title: string }[];
  /** Why the step fails (none: it succeeds). */
  readonly failure?: string;
  /** The conclusion the orchestrator decides again with (none: no decision after the job). */
  readonly conclusion?: 'success' | 'failure';
}

/** One job of a kind, as the shell runs it. */
export interface JobRecipe<P extends { readonly config: EpicflowConfig }, R> {
  readonly ref: JobRef;
  /** The failure summary's title when the job could not start. */
  readonly didNotRun: string;
  /** The failure summary's title when the work failed. */
  readonly failed: string;
  /** The log group the work runs in. */
  readonly group: string;
  /**
   * The job runs no code it does not trust (the publish job): no agent user, no sandbox,
   * and no folder is handed to anyone.
   */
  readonly runsNothingUntrusted?: true;
  /**
   * The job's token can only read (a work job): a refusal is not recorded here; the publish
   * job after it finds no result and records why.
   */
  readonly readsOnly?: true;
  /**
   * What the job reads and checks before anything changes: the kind's record steps for this
   * job's input (the shell opens the job, finds the record, refuses a stale one, then prepares).
   */
  prepare(job: GitHubJob): Preparation<P>;
  /**
   * The work. A publish job ends with the record the shell saves (`Saving`), or with the push
   * the shell makes first and the record made from how it ended (`Pushing`).
   */
  run(job: GitHubJob, prepared: P): Promise<R | Saving<R> | Pushing<R>>;
  /** `superseded`: a newer attempt took the record over, nothing was written (the shell says so). */
  report(job: GitHubJob, prepared: P, result: R, superseded: boolean): JobReport;
}

/** A job of a kind whose recipe the shell runs: any recipe's own prepared and result types. */
export type AnyRecipe = JobRecipe<{ readonly config: EpicflowConfig }, unknown>;

/**
 * One kind of job (`JobRef['kind']`), the one object the shell runs for it: the recipe of
 * each of its jobs, and how a job of it that could not run, or failed, is refused.
 */
export interface JobKind<Ref extends JobRef> {
  /** The recipe of the job of this `phase` (none: the one job of earlier workflows). */
  recipe(ref: Ref, phase: 'work' | 'publish' | undefined): AnyRecipe;
  /**
   * Fails the record the job was dispatched for with the reason, while it is still the
   * job's own (a retry, a cancel or a newer attempt is left alone), and says so on the epic
   * where the kind says it.
   */
  refuse(repo: GitHubRepo, ref: Ref, reason: string, now: Date): Promise<void>;
}

/** The head of a job summary whose record a newer attempt took over. */
export const SUPERSEDED = 'superseded by a newer attempt: nothing written';

/** What every job kind's input holds, from the job as the shell opened it. */
export function jobInput(job: GitHubJob, ref: JobRef): JobInput & { readonly remote: RemoteGit } {
  return {
    epic: ref.epic,
    configPath: job.inputs.config,
    defaultBranch: job.defaultBranch,
    repo: job.repo,
    remote: job.remote,
    workspace: job.runner.workspace,
    tempDir: job.work,
    env: job.childEnv,
    untrusted: job.untrusted,
    scrubbed: job.scrubbed,
    interrupt: job.interrupt,
  };
}

/** Where a work job writes its result, and its publish job reads it, unless the workflow names a folder. */
export function resultDir(job: Pick<GitHubJob, 'inputs' | 'runner'>): string {
  return job.inputs.result ?? join(job.runner.tempDir, 'epicflow-result');
}

/** Only a dispatch of the repository's own workflow reaches the write credential of a publish job. */
export function requireDispatch(job: GitHubJob): void {
  const { eventName } = job.runner;
  if (eventName !== undefined && eventName !== 'workflow_dispatch') {
    throw new EpicflowError(
      'usage',
      `the publish job runs only for workflow_dispatch, not ${eventName}`,
    );
  }
}

/**
 * A job of a kind that runs agent code, dispatched to the one job of earlier versions of the
 * story workflow: refused before anything runs, saying what to update.
 */
export function oneJobRefusal<P extends { readonly config: EpicflowConfig }>(
  ref: JobRef,
  title: string,
): JobRecipe<P, never> {
  const refusal = (): never => {
    throw new EpicflowError(
      'usage',
      `${title} was dispatched to a story workflow that runs it in one job, with the write credential beside the agent`,
      {
        details: [
          'epicflow now runs it in two jobs: a work job whose token can only read, and a publish job that holds the write credential and runs nothing of the repository',
          'update .github/workflows/epicflow-story.yml from `epicflow init --force` (or the example in docs/setup-actions.md), then comment /resume on the epic',
        ],
      },
    );
  };
  return {
    ref,
    didNotRun: `${title} did not run`,
    failed: `${title} did not run`,
    group: `epicflow: ${title}`,
    runsNothingUntrusted: true,
    prepare: () => refusal(),
    run: async () => refusal(),
    report: () => refusal(),
  };
}
