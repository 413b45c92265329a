/**
 * The one shell every job of the story workflow runs in, whatever its kind (a story,
 * a planning attempt, a retro, a landing; `JobRef`, each one `JobKind` of jobs/github): the
 * job's own folder, the GitHub connection, the untrusted user its agents run as, the job
 * opened on GitHub, its record found as the kind says and refused when stale, then the
 * recipe's `prepare` with the fresh record (`prepareJob`, jobs/github/job-record.ts: all
 * before anything changes), the executors' secrets masked, the credentials scrubbed from
 * the checkout, the recipe's work in a log group, the push a publish job describes
 * (`makePush`, jobs/github/job-push.ts), the record it ends with saved by one
 * compare-and-swap (`saveRecord`; a lost one means what the kind declares: superseded,
 * reported one way here, or made again), then its report (outputs, job summary,
 * annotations, the step's failure) and, for the kinds that ask for it, the orchestrator's
 * decision after it. A job that could not run, or failed, is refused one way: its record
 * fails with the reason, the summary says why, `status` is `failed` and the step fails.
 * The kinds (jobs/github/*-kind.ts) say only what differs: a new kind is its `JobRef` arm,
 * its file in jobs/github and one line in jobs/github/kinds.ts (docs/architecture.md,
 * "Adding a job kind").
 */
import * as core from '@actions/core';
import type { GitHubRepo } from '../adapters/github/index.js';
import { onInterrupt } from '../adapters/process/interrupt.js';
import { sameUser } from '../adapters/process/untrusted.js';
import type { EpicflowConfig } from '../core/config/types.js';
import { jobTitle, type JobRef } from '../core/epic/index.js';
import { describeError, isEpicflowError, oneLine } from '../core/errors.js';
import type { AnyRecipe, GitHubJob, JobKind, JobReport } from '../jobs/github/job-kind.js';
import { makePush, Pushing } from '../jobs/github/job-push.js';
import { prepareJob, saveRecord, Saving, type Preparation } from '../jobs/github/job-record.js';
import { redact, renderFailureSummary } from '../jobs/github/job-summary.js';
import { connectJob } from './github.js';
import type { PlanInputs, RetroInputs, StoryInputs } from './inputs.js';
import { inJobFolder, isolateUntrusted, maskExecutorSecrets, reconcileAfter } from './job.js';
import type { RunnerContext } from './runner.js';

/** What the Action runs a job with. */
export interface JobModeDeps {
  readonly inputs: StoryInputs | PlanInputs | RetroInputs;
  readonly runner: RunnerContext;
  readonly env: NodeJS.ProcessEnv;
}

/** Runs the job `ref` names, of `kind`, in the job of this `phase`. */
export async function runActionJob<Ref extends JobRef>(
  deps: JobModeDeps,
  kind: JobKind<Ref>,
  ref: Ref,
  phase: 'work' | 'publish' | undefined,
): Promise<void> {
  const recipe = kind.recipe(ref, phase);
  const refusal = (repo: GitHubRepo, reason: string, now: Date): Promise<void> =>
    kind.refuse(repo, ref, reason, now);
  // A cancelled step gets SIGINT, SIGTERM 7.5 s later and its process tree killed 2.5 s
  // after that: the work stops at once, ends what it started (the agent, the gates) and
  // hands over what is done, and the job's folder is removed. A second signal changes
  // nothing: a publish job's push is never cut short by it.
  const interrupt = onInterrupt({
    secondQuits: false,
    say: (name) =>
      core.warning(`${name}: the step is cancelled: stopping, and handing over what is done`),
  });
  try {
    return await inJobFolder((work) => runIn(deps, recipe, refusal, work, interrupt.signal));
  } finally {
    interrupt.release();
  }
}

async function runIn(
  deps: JobModeDeps,
  recipe: AnyRecipe,
  refusal: (repo: GitHubRepo, reason: string, now: Date) => Promise<void>,
  work: string,
  interrupt: AbortSignal,
): Promise<void> {
  const { inputs, runner, env } = deps;
  const { gh, remote, childEnv, defaultBranch } = await connectJob(inputs, runner, env);
  const { repo, secrets } = gh;
  // A work job's token can only read: the publish job after it finds no result and records why.
  const record = recipe.readsOnly === true ? undefined : refusal;
  const refuse = (e: unknown, title: string): Promise<void> =>
    refuseJob(e, { repo, title, secrets, record });
  let job: GitHubJob;
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
      interrupt,
      log: (message) => core.info(message),
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
      const work = await recipe.run({ ...job, scrubbed }, prepared);
      // A publish job's push first, then the record its kind made from how it ended.
      const ran = work instanceof Pushing ? await makePush(work) : work;
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
