/**
 * The two jobs of a kind whose work job hands over text (a planning attempt, a retro): the
 * work job prepares with a token that can only read, runs the executor and writes the
 * hand-over where the workflow uploads it; the publish job prepares again with the write
 * credential, reads the hand-over back (jobs/github/handover.ts) and writes it. A dispatch
 * without a phase (a workflow of one job) is refused. The kinds say only what differs.
 */
import type { EpicflowConfig } from '../../core/config/types.js';
import type { JobRef } from '../../core/epic/index.js';
import type { Handover } from '../../core/publish/handover.js';
import { readHandover, writeHandover } from './handover.js';
import type { RemoteGit } from '../../adapters/git/remote-git.js';
import type { Preparation, Saving } from './job-record.js';
import type { JobInput } from './job-shell.js';
import type { Pushing } from './job-push.js';
import {
  jobInput,
  oneJobRefusal,
  SUPERSEDED,
  requireDispatch,
  resultDir,
  type AnyRecipe,
  type GitHubJob,
  type JobKind,
  type JobRecipe,
  type JobReport,
} from './job-kind.js';

/** A job of a kind that hands over a record: its epic and attempt name it. */
type HandoverRef = JobRef & { readonly epic: number; readonly attempt: number };

/** What a kind that hands over a record says of itself; `handoverKind` makes its object. */
/** What a kind's jobs prepare: at least the configuration. */
type Prepared = { readonly config: EpicflowConfig };

interface HandoverKind<Ref extends HandoverRef, I, P extends Prepared, H extends Handover, R> {
  readonly job: H['job'];
  /** `planning of epic #7`: the titles and log groups say it. */
  title(ref: Ref): string;
  /** The kind's input, from the job as the shell opened it. */
  input(job: GitHubJob, ref: Ref): I;
  /** Its record steps for the input (`preparation(input, steps)`, job-record.ts). */
  prepare(input: I): Preparation<P>;
  /** The work job's part: the executor runs; what it made is handed over. */
  work(input: I, prepared: P): Promise<H>;
  /**
   * The publish job's part: the hand-over, read back and checked, written to GitHub; it
   * ends with the record the shell saves (after the push it describes, if any).
   */
  publish(input: I, prepared: P, handover: H): Promise<Saving<R> | Pushing<R>> | Saving<R>;
  /** The work job's report: where the executor ran (`job.untrusted`), what it handed over. */
  workReport(
    job: GitHubJob,
    ref: Ref,
    handover: H,
  ): Omit<JobReport, 'outputs'> & {
    readonly outputs?: Readonly<Record<string, string>>;
  };
  publishReport(ref: Ref, result: R, superseded: boolean): JobReport;
  readonly refuse: JobKind<Ref>['refuse'];
}

/** What a job of an attempt shows: the hand-over, what the publish job made of it (none in the work job), where the executor ran. */
interface Shown<H, R> {
  readonly handover: H;
  readonly published: R | undefined;
  readonly where: string;
}

/** A planning or retro summary's parts: its title, what came of it (in bold), its lines. */
interface SummaryParts {
  readonly title: string;
  readonly head: string;
  readonly lines: readonly string[];
}

/** How a kind sums up a job of an attempt. */
export type Summary<Ref, H, R> = (ref: Ref, shown: Shown<H, R>) => SummaryParts;

/** A planning or retro summary: its parts, then the hand-over's notes. */
function handoverSummary(parts: SummaryParts, handover: Pick<Handover, 'notes'>): string {
  return [
    `## epicflow: ${parts.title}`,
    '',
    `**${parts.head}**`,
    '',
    ...parts.lines,
    ...handover.notes.map((n) => `- note: ${n}`),
    '',
  ].join('\n');
}

/** The object of a kind that hands over a record: its two jobs' recipes and its refusal. */
export function handoverKind<Ref extends HandoverRef, I, P extends Prepared, H extends Handover, R>(
  kind: HandoverKind<Ref, I, P, H, R>,
): JobKind<Ref> {
  /** The recipe for the job of this `phase` (none: a workflow of one job, refused). */
  const recipe = (ref: Ref, phase: 'work' | 'publish' | undefined): JobRecipe<P, unknown> => {
    const title = kind.title(ref);
    const input = (job: GitHubJob): I => kind.input(job, ref);
    if (phase === undefined) return oneJobRefusal<P>(ref, title);
    if (phase === 'work') {
      const work: JobRecipe<P, { handover: H; dir: string }> = {
        ref,
        didNotRun: `${title} did not run`,
        failed: `${title} failed`,
        group: `epicflow: ${title}`,
        readsOnly: true,
        prepare: (job) => kind.prepare(input(job)),
        run: async (job, prepared) => {
          const handover = await kind.work(input(job), prepared);
          const dir = resultDir(job);
          await writeHandover(dir, handover);
          return { handover, dir };
        },
        report: (job, _prepared, { handover, dir }) => {
          const report = kind.workReport(job, ref, handover);
          return {
            ...report,
            outputs: { status: handover.outcome.kind, result: dir, ...report.outputs },
          };
        },
      };
      return work as JobRecipe<P, unknown>;
    }
    const publish: JobRecipe<P, R> = {
      ref,
      didNotRun: `${title} was not published`,
      failed: `${title} could not be published`,
      group: `epicflow: publish the ${title}`,
      runsNothingUntrusted: true,
      prepare: (job) => {
        requireDispatch(job);
        return kind.prepare(input(job));
      },
      run: async (job, prepared) => {
        // The schema read is the one of `kind.job`: the hand-over is of this kind.
        const handover: Handover = await readHandover(resultDir(job), {
          job: kind.job,
          epic: String(ref.epic),
          attempt: ref.attempt,
          workOutcome: job.inputs.workOutcome,
          secrets: job.secrets,
        });
        return kind.publish(input(job), prepared, handover as H);
      },
      report: (_job, _prepared, result, superseded) => kind.publishReport(ref, result, superseded),
    };
    return publish as JobRecipe<P, unknown>;
  };
  return { recipe: (ref, phase) => recipe(ref, phase) as AnyRecipe, refuse: kind.refuse };
}

/** The input of an attempt's job (a planning attempt, a retro): its log lines start with `what`. */
export function attemptInput(
  job: GitHubJob,
  ref: HandoverRef,
  what: string,
): JobInput & { readonly remote: RemoteGit; readonly attempt: number } & {
  readonly onEvent: (message: string) => void;
} {
  return {
    ...jobInput(job, ref),
    attempt: ref.attempt,
    onEvent: (message) => job.log(`${what}: ${message}`),
  };
}

/**
 * The reports of a kind whose record is a document with a status (a planning attempt, a
 * retro): one summary for both jobs (`published` undefined in the work job), the status as
 * the publish job's output, and the step failed with `failure` when it says why.
 */
export function documentReports<
  Ref extends HandoverRef,
  H extends Handover,
  R extends { readonly doc: { readonly status: string }; readonly handover: H },
>(
  summary: Summary<Ref, H, R>,
  failure: (ref: Ref, result: R) => string | undefined,
): Pick<HandoverKind<Ref, never, never, H, R>, 'workReport' | 'publishReport'> {
  return {
    workReport: (job, ref, handover) => {
      const where = job.untrusted.description;
      return {
        summary: handoverSummary(summary(ref, { handover, published: undefined, where }), handover),
      };
    },
    publishReport: (ref, result, superseded) => {
      const { handover } = result;
      const parts = summary(ref, { handover, published: result, where: 'in the work job' });
      const failed = failure(ref, result);
      return {
        outputs: { status: result.doc.status },
        summary: handoverSummary(superseded ? { ...parts, head: SUPERSEDED } : parts, handover),
        ...(failed === undefined ? {} : { failure: failed }),
      };
    },
  };
}
