/**
 * A story recorded `active` whose job never ran, or whose run ended without the
 * job recording an outcome, would stay active for ever: nothing else ever writes
 * its record. A dispatch can fail after its record was written (GitHub answered
 * 5xx, the process deciding died), and a run can be cancelled before its job
 * wrote anything. So every decision looks at the `active` records dispatched
 * longer than a grace period ago; for those (and only those) the shell asks
 * GitHub, in one listing, whether their run exists, and hands the answer over
 * as data. A run that never started, or that ended, fails the story with a
 * reason, and `/resume` or `/retry` starts it again with a new attempt.
 */
import type { StoryRecord } from '../model.js';
import { formatUtcTime } from '../report/format.js';

/**
 * Minutes after its dispatch by which a story's run must exist. GitHub creates a
 * run within seconds of a dispatch; a run waiting for a runner exists (queued),
 * so a long queue never trips this.
 */
export const DISPATCH_GRACE_MINUTES = 15;

/** What GitHub's runs of the story workflow say about one dispatched attempt. */
export type DispatchedRun =
  /** No run of this attempt exists (the listing was complete). */
  | { readonly attempt: number; readonly kind: 'none' }
  /** A run of this attempt exists and has not finished (queued, waiting or in progress). */
  | { readonly attempt: number; readonly kind: 'running' }
  /** The run of this attempt finished, with this conclusion. */
  | { readonly attempt: number; readonly kind: 'ended'; readonly conclusion: string };

export interface OverdueDispatch {
  readonly story: string;
  readonly attempt: number;
  /** When it was dispatched: the record's `startedAt`. */
  readonly dispatchedAt: string;
}

/** Active records dispatched more than the grace period before `now`: their runs must be looked up. */
export function overdueDispatches(
  records: Readonly<Record<string, StoryRecord>>,
  now: string,
): OverdueDispatch[] {
  const out: OverdueDispatch[] = [];
  for (const r of Object.values(records)) {
    if (r.status !== 'active' || r.startedAt === undefined) continue;
    if (!pastGrace(r.startedAt, now)) continue;
    out.push({ story: r.story, attempt: r.attempt, dispatchedAt: r.startedAt });
  }
  return out;
}

/**
 * Why an active record failed, judged from its run (undefined: it has not, or
 * nothing is known). Only the record's own attempt counts: a run of an earlier
 * attempt says nothing about this one.
 */
export function strandedReason(
  record: StoryRecord,
  run: DispatchedRun | undefined,
  now: string,
): string | undefined {
  if (record.status !== 'active' || run === undefined || run.attempt !== record.attempt) {
    return undefined;
  }
  if (run.kind === 'ended') return endedWithoutOutcome(run.conclusion);
  if (run.kind !== 'none' || record.startedAt === undefined) return undefined;
  if (!pastGrace(record.startedAt, now)) return undefined;
  return `dispatched at ${formatUtcTime(record.startedAt, now)} but no run started within ${DISPATCH_GRACE_MINUTES} minutes`;
}

/** The failure of a story whose run ended while its record still said it was running. */
export function endedWithoutOutcome(conclusion: string): string {
  return `the job ended (${conclusion}) without recording an outcome`;
}

function pastGrace(dispatchedAt: string, now: string): boolean {
  const at = Date.parse(dispatchedAt);
  const current = Date.parse(now);
  if (Number.isNaN(at) || Number.isNaN(current)) return false;
  return current - at > DISPATCH_GRACE_MINUTES * 60_000;
}
