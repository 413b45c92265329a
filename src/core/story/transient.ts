/**
 * Transient faults of a turn (coder, judge or verifier) and the story's budget
 * of retries for them (`retries.transient`): an outage or 5xx of the model, a
 * network timeout, a crash of the CLI (it exited nonzero, or was killed, without
 * a classified cause). Such a turn is run again after a backoff while the
 * budget lasts; only then does what a turn's end does today happen (the roster
 * hears of an outage, a crash fails the story or the helper call).
 */
import type { OutcomeClass, Stall } from '../executor.js';
import { NETWORK_TIMEOUT } from '../harness/signals.js';

/** How a turn ended, as far as telling a transient fault goes. */
export interface TurnEnd {
  readonly outcome: OutcomeClass;
  readonly missingBinary: boolean;
  readonly detail: string;
  /** The process's exit code; null: killed by a signal; undefined: not known. */
  readonly exitCode?: number | null | undefined;
  /** epicflow's own timeout ended the turn: it took too long, no fault to retry. */
  readonly timedOut?: boolean | undefined;
  /** The agent stopped at its own turn or budget cap: the work's failure, not a crash. */
  readonly capped?: boolean | undefined;
  /** epicflow stopped the turn as stalled: the work's failure, no fault to retry. */
  readonly stalled?: Stall | undefined;
}

type TransientKind = 'outage' | 'network-timeout' | 'crash';

interface TransientFault {
  readonly kind: TransientKind;
  /** For people: `outage (HTTP 503)`, `network timeout`, `crash (exit code 1)`. */
  readonly label: string;
}

/** An HTTP status of the 5xx class, as CLIs print it. */
const SERVER_STATUS = /\b(5(?:0\d|2\d))\b/;

/** The transient fault a turn ended on, or null (ok, a limit, auth, a missing CLI, its own failure). */
export function transientFault(end: TurnEnd): TransientFault | null {
  if (end.missingBinary || end.timedOut === true || end.stalled !== undefined) return null;
  const text = end.detail.replace(/\bhttps?:\/\/\S+/g, '');
  if (end.outcome === 'outage') {
    if (NETWORK_TIMEOUT.test(text)) return { kind: 'network-timeout', label: 'network timeout' };
    const status = SERVER_STATUS.exec(text)?.[1];
    return { kind: 'outage', label: status === undefined ? 'outage' : `outage (HTTP ${status})` };
  }
  if (end.outcome !== 'failed' || end.capped === true) return null;
  if (NETWORK_TIMEOUT.test(text)) return { kind: 'network-timeout', label: 'network timeout' };
  if (end.exitCode === null) return { kind: 'crash', label: 'crash (killed by a signal)' };
  if (end.exitCode !== undefined && end.exitCode !== 0) {
    return { kind: 'crash', label: `crash (exit code ${end.exitCode})` };
  }
  return null;
}

/** The story's retries for transient faults: `retries.transient` and `retries.backoff`. */
export interface RetryRules {
  readonly transient: number;
  readonly backoffMs: number;
}

/** No wait before a retry is longer than this (unless the configured first one is). */
const MAX_BACKOFF_MS = 2 * 60_000;

/** The wait before retry `n` (1 first): the backoff, doubled for each retry before it. */
export function backoffMs(rules: RetryRules, n: number): number {
  const ms = rules.backoffMs * 2 ** Math.max(0, n - 1);
  return Math.min(ms, Math.max(rules.backoffMs, MAX_BACKOFF_MS));
}

/** `2 s`, `500 ms`, `1 min 4 s`. */
export function formatWait(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const rest = s % 60;
  return rest === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${rest} s`;
}

interface TransientRetry {
  /** Retries of the story so far, this one included. */
  readonly used: number;
  readonly waitMs: number;
  /** `coder turn 1: outage (HTTP 503), retry 1 of 3 in 2 s`. */
  readonly message: string;
}

/**
 * A retry of `turn` (e.g. `coder turn 1`), which ended on `fault`, while the
 * story's budget lasts (`used` retries so far); null once it is spent.
 */
export function retryTransient(
  rules: RetryRules,
  used: number,
  fault: TransientFault,
  turn: string,
): TransientRetry | null {
  if (used >= rules.transient) return null;
  const n = used + 1;
  const waitMs = backoffMs(rules, n);
  return {
    used: n,
    waitMs,
    message: `${turn}: ${fault.label}, retry ${n} of ${rules.transient} in ${formatWait(waitMs)}`,
  };
}

/** What a failure reason adds once the budget was spent on retries (`''` when none were made). */
export function afterRetries(used: number): string {
  return used === 0 ? '' : ` after ${used} ${used === 1 ? 'retry' : 'retries'}`;
}
