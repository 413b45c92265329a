/**
 * The two jobs of a kind whose work job hands over text (a planning attempt, a retro): the
 * work job prepares with a token that can only read, runs the executor and writes the
 * hand-over where the workflow uploads it; the publish job prepares again with the write
 * credential, reads the hand-over back (jobs/github/handover.ts) and writes it. A dispatch
 * without a phase (a workflow of one job) is refused. The kinds say only what differs.
 */
import type { EpicflowConfig } from '../core/config/types.js';
import type { JobRef } from '../core/epic/index.js';
import type { Handover } from '../core/publish/handover.js';
import { readHandover, writeHandover } from '../jobs/github/handover.js';
import type { Preparation, Saving } from '../jobs/github/job-record.js';
import type { PlanInputs } from './inputs.js';
import {
  oneJobRefusal,
  requireDispatch,
  resultDir,
  type ActionJob,
  type ActionRecipe,
  type JobReport,
} from './shell.js';

interface HandoverKind<P extends { readonly config: EpicflowConfig }, H extends Handover, R> {
  readonly ref: JobRef & { readonly epic: number; readonly attempt: number };
  readonly job: H['job'];
  /** `planning of epic #7`: the titles and log groups say it. */
  readonly title: string;
  prepare(job: ActionJob): Preparation<P>;
  /** The work job's part: the executor runs; what it made is handed over. */
  work(job: ActionJob, prepared: P): Promise<H>;
  /**
   * The publish job's part: the hand-over, read back and checked, written to GitHub; it
   * ends with the record the shell saves.
   */
  publish(job: ActionJob, prepared: P, handover: H): Promise<Saving<R>> | Saving<R>;
  workReport(
    job: ActionJob,
    handover: H,
  ): Omit<JobReport, 'outputs'> & {
    readonly outputs?: Readonly<Record<string, string>>;
  };
  publishReport(result: R, superseded: boolean): JobReport;
}

/** The recipe for the job of this `phase` (none: a workflow of one job, refused). */
export function handoverJob<P extends { readonly config: EpicflowConfig }, H extends Handover, R>(
  kind: HandoverKind<P, H, R>,
  phase: 'work' | 'publish' | undefined,
): ActionRecipe<P, unknown> {
  const { ref, title } = kind;
  if (phase === undefined) return oneJobRefusal<P>(ref, title);
  if (phase === 'work') {
    const work: ActionRecipe<P, { handover: H; dir: string }> = {
      ref,
      didNotRun: `${title} did not run`,
      failed: `${title} failed`,
      group: `epicflow: ${title}`,
      readsOnly: true,
      prepare: (job) => kind.prepare(job),
      run: async (job, prepared) => {
        const handover = await kind.work(job, prepared);
        const dir = resultDir(job);
        await writeHandover(dir, handover);
        return { handover, dir };
      },
      report: (job, _prepared, { handover, dir }) => {
        const report = kind.workReport(job, handover);
        return {
          ...report,
          outputs: { status: handover.outcome.kind, result: dir, ...report.outputs },
        };
      },
    };
    return work as ActionRecipe<P, unknown>;
  }
  const publish: ActionRecipe<P, R> = {
    ref,
    didNotRun: `${title} was not published`,
    failed: `${title} could not be published`,
    group: `epicflow: publish the ${title}`,
    runsNothingUntrusted: true,
    prepare: (job) => {
      requireDispatch(job);
      return kind.prepare(job);
    },
    run: async (job, prepared) => {
      // The schema read is the one of `kind.job`: the hand-over is of this kind.
      const handover: Handover = await readHandover(resultDir(job), {
        job: kind.job,
        epic: String(ref.epic),
        attempt: ref.attempt,
        workOutcome: (job.inputs as PlanInputs).workOutcome,
        secrets: job.secrets,
      });
      return kind.publish(job, prepared, handover as H);
    },
    report: (_job, _prepared, result, superseded) => kind.publishReport(result, superseded),
  };
  return publish as ActionRecipe<P, unknown>;
}
