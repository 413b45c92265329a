/**
 * Keeping a GitHub epic mergeable, and what follows its pull request (docs/landing.md),
 * pure: when the default branch moved, whether a `land-<n>` job starts, waits for the
 * one running (queued, never doubled) or is not needed; what a landing that failed
 * holds the epic with; and what the pull request's merge or close does. The landing's
 * own rules (merge, gates, rounds, perimeter) are the engine's (`bringIntoEpic`).
 */
import { nextLandJob, withLand, type LandLog, type LandRecord } from '../land/index.js';
import type { Halt, HaltKind } from '../model.js';
import { code } from '../report/escape.js';
import { endedWithoutOutcome } from './dispatch-check.js';

/** The landing log's document on the state branch (`epics/<n>/land.json`). */
export const LAND_DOC = 'land';

export { isLandJob } from './job-ref.js';

/** Halts under which no landing starts: people stopped the epic, or must act first. */
const NO_LANDING: ReadonlySet<HaltKind> = new Set(['cancel', 'land-failed', 'pr-closed']);

export interface LandingInput {
  readonly log: LandLog;
  readonly epicBranch: string;
  /** The default branch, and its head now. */
  readonly into: string;
  readonly intoHead: string;
  /** The epic branch's head (null: no epic branch). */
  readonly epicHead: string | null;
  /** Whether the epic's pull request is open. */
  readonly prOpen: boolean;
  readonly landed: boolean;
  readonly halt: Halt | undefined;
  readonly now: string;
}

export type LandingDecision =
  /** Write `log` (compare-and-swap), then dispatch `record.job`. */
  | { readonly kind: 'start'; readonly log: LandLog; readonly record: LandRecord }
  /** Write `log`: the landing waits for the running one. */
  | { readonly kind: 'queue'; readonly log: LandLog }
  | { readonly kind: 'none'; readonly reason: string };

/** The landing running now, if any. */
function runningLanding(log: LandLog): LandRecord | undefined {
  return log.lands.find((l) => l.outcome === 'running');
}

/**
 * The default branch moved to `intoHead` (or the epic is about to be marked ready):
 * start a landing, queue it behind the running one, or nothing. Deciding again on the
 * same head decides nothing new (a redelivered push does nothing twice).
 */
export function decideLanding(input: LandingInput): LandingDecision {
  const { log } = input;
  if (input.landed) return { kind: 'none', reason: 'the epic has landed' };
  if (input.epicHead === null || !input.prOpen) {
    return { kind: 'none', reason: 'the epic has no open pull request to keep mergeable' };
  }
  if (input.halt !== undefined && NO_LANDING.has(input.halt.kind)) {
    return { kind: 'none', reason: `the epic is held: ${input.halt.message}` };
  }
  const running = runningLanding(log);
  if (running !== undefined) {
    if (running.intoHeadBefore === input.intoHead || log.pending?.intoHead === input.intoHead) {
      return { kind: 'none', reason: `${running.job} is landing ${input.intoHead.slice(0, 12)}` };
    }
    const pending = { into: input.into, intoHead: input.intoHead, since: input.now };
    return { kind: 'queue', log: { ...log, pending } };
  }
  const tried = log.lands.find((l) => l.intoHeadBefore === input.intoHead && l.into === input.into);
  if (tried !== undefined) {
    return {
      kind: 'none',
      reason: `${tried.job} already brought ${input.intoHead.slice(0, 12)} in (${tried.outcome})`,
    };
  }
  const record: LandRecord = {
    job: nextLandJob(log),
    into: input.into,
    epicBranch: input.epicBranch,
    startedAt: input.now,
    outcome: 'running',
    epicHeadBefore: input.epicHead,
    intoHeadBefore: input.intoHead,
    conflicts: [],
    failingGates: [],
    rounds: 0,
    executors: [],
    usage: [],
    notes: [],
  };
  const { pending: _p, ...rest } = log;
  return { kind: 'start', log: withLand(rest, record), record };
}

/**
 * A `land-<n>` run completed. The job records its outcome before it ends: a record
 * still running means the job died first, and it is marked so. The log to write
 * (undefined: nothing changed), and the landing that record leaves behind unfinished.
 */
export function landRunEnded(
  log: LandLog,
  job: string,
  conclusion: string,
  now: string,
): { readonly log: LandLog | undefined; readonly died: LandRecord | undefined } {
  const record = log.lands.find((l) => l.job === job);
  if (record?.outcome !== 'running') return { log: undefined, died: undefined };
  const died: LandRecord = {
    ...record,
    outcome: 'not-landed',
    finishedAt: now,
    reason: endedWithoutOutcome(conclusion),
  };
  return { log: withLand(log, died), died };
}

/** What people do after a landing failed on GitHub: resolve by hand, then `/resume`. */
export function githubLandNextStep(record: LandRecord): string {
  // The trailer keeps the stories merged below the hand-made merge counted as merged.
  const commit = `commit the merge with the trailer ${code(`Epicflow-Land:${record.into}`).replace(':', ': ')}`;
  const resume = `${commit}, push, then comment \`/resume\``;
  if (record.conflicts.length > 0) {
    return `Resolve ${record.conflicts.map((p) => code(p)).join(', ')} by hand: merge ${record.into} into ${record.epicBranch}, fix the conflicts, ${resume}.`;
  }
  if (record.failingGates.length > 0) {
    return `Merge ${record.into} into ${record.epicBranch} by hand and make ${record.failingGates.map((g) => `\`${g.replace(/`/g, "'")}\``).join(', ')} pass, ${resume}.`;
  }
  return `Merge ${record.into} into ${record.epicBranch} by hand (or check why ${record.job} failed), ${resume}.`;
}

/** The epic's halt after a landing failed: nothing starts until people resolved it. */
export function landHalt(record: LandRecord): Halt {
  const what =
    record.conflicts.length > 0
      ? `conflicts in ${record.conflicts.join(', ')}`
      : (record.reason ?? 'the landing failed');
  return {
    kind: 'land-failed',
    message: `${record.job}: ${record.into} does not merge into ${record.epicBranch} (${what})`,
    nextStep: githubLandNextStep(record),
  };
}

/** The epic's halt after its pull request was closed without a merge. */
export function prClosedHalt(pr: number): Halt {
  return {
    kind: 'pr-closed',
    message: `pull request #${pr} was closed without being merged`,
    nextStep: `Reopen pull request #${pr} and comment \`/resume\` to continue (\`/resume\` alone opens a new one).`,
  };
}

/** The line the final report on the epic issue starts with. */
export function landedHeadline(input: {
  readonly pr: number;
  readonly mergeCommit: string;
  readonly into: string;
}): string {
  return `**Landed**: pull request #${input.pr} was merged into ${input.into} (${input.mergeCommit.slice(0, 12)}).`;
}
