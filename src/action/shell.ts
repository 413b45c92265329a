/**
 * The one shell every job of the story workflow runs in, whatever its kind (a story,
 * a planning attempt, a retro, a landing; `JobRef`, each one `ActionKind`): the job's own folder, the GitHub
 * connection, the untrusted user its agents run as, the job opened on GitHub, its record
 * found as the kind says and refused when stale, then the recipe's `prepare` with the fresh
 * record (`prepareJob`, jobs/github/job-record.ts: all before anything changes), the
 * executors' secrets masked, the recipe's work in a log group, the record a publish job ends
 * with saved by one compare-and-swap (`saveRecord`; a lost one means what the kind declares:
 * superseded, reported one way here, or made again), then its report (outputs, job summary,
 * annotations, the step's failure) and, for the kinds that ask for it, the orchestrator's
 * decision after it. A job that could not run, or failed, is refused one way: its record
 * fails with the reason, the summary says why, `status` is `failed` and the step fails.
 * The kinds (story.ts, plan.ts, retro.ts, land.ts) say only what differs: a new kind is
 * its `JobRef` arm, its job code in jobs/github (with its record steps), its object here
 * and one line in run.ts's table (docs/architecture.md, "Adding a job kind").
 */
import * as core from '@actions/core';
import { join } from 'node:path';
import type { GitHubRepo } from '../adapters/github/index.js';
import type { RemoteGit } from '../adapters/git/remote-git.js';
import { sameUser, type Untrusted } from '../adapters/process/untrusted.js';
import type { EpicflowConfig } from '../core/config/types.js';
import { jobTitle, type JobRef } from '../core/epic/index.js';
import { describeError, EpicflowError, isEpicflowError, oneLine } from '../core/errors.js';
import { prepareJob, saveRecord, Saving, type Preparation } from '../jobs/github/job-record.js';
import type { JobInput } from '../jobs/github/job-shell.js';
import { connectJob } from './github.js';
import type { PlanInputs, RetroInputs, StoryInputs } from './inputs.js';
import { inJobFolder, isolateUntrusted, maskExecutorSecrets, reconcileAfter } from './job.js';
import type { RunnerContext } from './runner.js';
import { redact, renderFailureSummary } from './summary.js';

/** What the Action runs a job with. */
export interface JobModeDeps {
  readonly inputs: StoryInputs | PlanInputs | RetroInputs;
  readonly runner: RunnerContext;
  readonly env: NodeJS.ProcessEnv;
}

/** A job opened by the shell: what a recipe's steps are given. */
export interface ActionJob extends JobModeDeps {
  readonly repo: GitHubRepo;
  readonly remote: RemoteGit;
  /** The environment executors and children start from: no credential in it. */
  readonly childEnv: NodeJS.ProcessEnv;
  /** From the event payload when it says (spares a read). */
  readonly defaultBranch: string | undefined;
  /** The job's own folder (`inJobFolder`). */
  readonly work: string;
  readonly untrusted: Untrusted;
  /** Every credential of the job so far (masked; what is written out is redacted with it). */
  readonly secrets: readonly string[];
  /** What the shell removed from the checkout's git config before the work ran (none yet while it prepares). */
  readonly scrubbed: readonly string[];
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

/** One job kind over the shell. */
export interface ActionRecipe<P extends { readonly config: EpicflowConfig }, R> {
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
   * The job's token can only read (a story's work job): a refusal is not recorded on the
   * story here; the publish job after it finds no result and records why.
   */
  readonly readsOnly?: true;
  /**
   * What the job reads and checks before anything changes: the kind's record steps for this
   * job's input (the shell opens the job, finds the record, refuses a stale one, then prepares).
   */
  prepare(job: ActionJob): Preparation<P>;
  /** The work; a publish job ends with the record the shell saves (`Saving`). */
  run(job: ActionJob, prepared: P): Promise<R | Saving<R>>;
  /** `superseded`: a newer attempt took the record over, nothing was written (the shell says so). */
  report(job: ActionJob, prepared: P, result: R, superseded: boolean): JobReport;
}

/** The head of a job summary whose record a newer attempt took over. */
export const SUPERSEDED = 'superseded by a newer attempt: nothing written';

/** A job of a kind whose recipe the shell runs: any recipe's own prepared and result types. */
type AnyRecipe = ActionRecipe<{ readonly config: EpicflowConfig }, unknown>;

/**
 * One kind of job (`JobRef['kind']`), the one object the shell runs for it: the recipe of
 * each of its jobs, and how a job of it that could not run, or failed, is refused.
 */
export interface ActionKind<Ref extends JobRef> {
  /** The recipe of the job of this `phase` (none: the one job of earlier workflows). */
  recipe(ref: Ref, phase: 'work' | 'publish' | undefined): AnyRecipe;
  /**
   * Fails the record the job was dispatched for with the reason, while it is still the
   * job's own (a retry, a cancel or a newer attempt is left alone), and says so on the epic
   * where the kind says it.
   */
  refuse(repo: GitHubRepo, ref: Ref, reason: string, now: Date): Promise<void>;
}

/** What every job kind's input holds, from the job as the shell opened it. */
export function jobInput(job: ActionJob, ref: JobRef): JobInput & { readonly remote: RemoteGit } {
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
  };
}

/** Where a work job writes its result, and its publish job reads it, unless the workflow names a folder. */
export function resultDir(job: ActionJob): string {
  const named = (job.inputs as StoryInputs | PlanInputs).result;
  return named ?? join(job.runner.tempDir, 'epicflow-result');
}

/** Only a dispatch of the repository's own workflow reaches the write credential of a publish job. */
export function requireDispatch(job: ActionJob): void {
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
): ActionRecipe<P, never> {
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

/** Runs the job `ref` names, of `kind`, in the job of this `phase`. */
export async function runActionJob<Ref extends JobRef>(
  deps: JobModeDeps,
  kind: ActionKind<Ref>,
  ref: Ref,
  phase: 'work' | 'publish' | undefined,
): Promise<void> {
  const recipe = kind.recipe(ref, phase);
  const refusal = (repo: GitHubRepo, reason: string, now: Date): Promise<void> =>
    kind.refuse(repo, ref, reason, now);
  return inJobFolder((work) => runIn(deps, recipe, refusal, work));
}

async function runIn(
  deps: JobModeDeps,
  recipe: AnyRecipe,
  refusal: (repo: GitHubRepo, reason: string, now: Date) => Promise<void>,
  work: string,
): Promise<void> {
  const { inputs, runner, env } = deps;
  const { gh, remote, childEnv, defaultBranch } = await connectJob(inputs, runner, env);
  const { repo, secrets } = gh;
  // A work job's token can only read: the publish job after it finds no result and records why.
  const record = recipe.readsOnly === true ? undefined : refusal;
  const refuse = (e: unknown, title: string): Promise<void> =>
    refuseJob(e, { repo, title, secrets, record });
  let job: ActionJob;
  let prepared: { readonly config: EpicflowConfig };
  let preparation: Preparation<{ readonly config: EpicflowConfig }>;
  try {
    // Before anything of the repository is read: no credential may be in reach of what runs.
    const untrusted =
      recipe.runsNothingUntrusted === true
        ? sameUser()
        : await isolateUntrusted(inputs, work, childEnv);
    job = {
      ...deps,
      repo,
      remote,
      childEnv,
      defaultBranch,
      work,
      untrusted,
      secrets,
      scrubbed: [],
    };
    preparation = recipe.prepare(job);
    prepared = await prepareJob(recipe.ref, preparation);
  } catch (e) {
    await refuse(e, recipe.didNotRun);
    return;
  }
  maskExecutorSecrets(prepared.config.executors, childEnv, secrets);
  let ended: { readonly result: unknown; readonly superseded: boolean };
  try {
    ended = await core.group(recipe.group, async () => {
      // Before anything of the repository runs: no credential may be in reach of the agent
      // (a job that runs nothing untrusted, the publish job, has no checkout to scrub).
      const scrubbed = recipe.runsNothingUntrusted === true ? [] : await remote.scrubCredentials();
      const ran = await recipe.run({ ...job, scrubbed }, prepared);
      if (!(ran instanceof Saving)) return { result: ran, superseded: false };
      const saved = await saveRecord(ran, preparation.lostSave);
      if (saved.superseded) {
        core.info('a newer attempt took the record over meanwhile: this outcome is dropped');
      }
      return saved;
    });
  } catch (e) {
    await refuse(e, recipe.failed);
    return;
  }
  const report = superseding(recipe.report(job, prepared, ended.result, ended.superseded), ended);
  for (const [name, value] of Object.entries(report.outputs)) core.setOutput(name, value);
  await writeSummary(report.summary, secrets);
  for (const { message, title } of report.errors ?? []) {
    core.error(redact(message, secrets), { title });
  }
  if (report.failure !== undefined) core.setFailed(redact(report.failure, secrets));
  if (report.conclusion !== undefined) {
    await reconcileAfter({
      repo,
      runner,
      defaultBranch,
      title: jobTitle(recipe.ref),
      conclusion: report.conclusion,
    });
  }
}

/** A report whose record a newer attempt took over: `superseded`, and nothing failed. */
function superseding(report: JobReport, ended: { readonly superseded: boolean }): JobReport {
  if (!ended.superseded) return report;
  const { failure: _f, conclusion: _c, ...rest } = report;
  return { ...rest, outputs: { ...report.outputs, status: 'superseded' } };
}

async function writeSummary(markdown: string, secrets: readonly string[]): Promise<void> {
  await core.summary.addRaw(redact(markdown, secrets), true).write();
}

/** The one failure path of a job: record the refusal, say why, fail the step. */
async function refuseJob(
  e: unknown,
  ctx: {
    repo: GitHubRepo;
    title: string;
    secrets: readonly string[];
    /** How the kind records the refusal (none: the job may not write it on its record). */
    record: ((repo: GitHubRepo, reason: string, now: Date) => Promise<void>) | undefined;
  },
): Promise<void> {
  const message = redact(describeError(e), ctx.secrets);
  const reason = oneLine(message);
  try {
    if (ctx.record !== undefined) await ctx.record(ctx.repo, reason, new Date());
  } catch (w) {
    core.warning(redact(`could not record the failure: ${describeError(w)}`, ctx.secrets));
  }
  await writeSummary(renderFailureSummary({ title: ctx.title, message }), ctx.secrets);
  core.setOutput('status', 'failed');
  core.setFailed(message);
  if (!isEpicflowError(e)) core.debug(String((e as Error).stack ?? e));
}
