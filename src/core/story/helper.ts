/**
 * One judge or verifier call as a reducer: which executor answers is the
 * roster's pick; this decides what follows each turn. An answer that does not
 * fit the schema gets one repair re-ask quoting the problem; infrastructure
 * (a missing CLI, a usage or rate limit, an outage) moves the call to another
 * executor, at most `HELPER_ATTEMPTS` times, after a backoff when the roster
 * did not exclude the executor; a failed turn ends the call without an answer.
 * Before either, a transient fault (an outage, a crash of the CLI, a network
 * timeout) asks again after a backoff while the story's `retries.transient` last.
 */
import { EpicflowError } from '../errors.js';
import type { OutcomeClass } from '../executor.js';
import type { Extracted } from '../judge/index.js';
import {
  executorSignal,
  RATE_LIMIT_BACKOFF_MS,
  type ExecutorSignal,
  type StoryEffect,
  type Unavailable,
} from './rounds.js';
import { INTERRUPTED, shortDetail } from './texts.js';
import {
  afterRetries,
  retryTransient,
  transientFault,
  type RetryRules,
  type TurnEnd,
} from './transient.js';

/** A judge or verifier call moves to another executor at most this many times. */
export const HELPER_ATTEMPTS = 3;

export type HelperRole = 'judge' | 'verifier' | 'reviewer';

/** What was decided so far about one helper call. */
export interface HelperCall {
  readonly role: HelperRole;
  /** Turns that ended on infrastructure (a repair re-ask is not one). */
  readonly attempts: number;
  /** The problem of the unreadable answer, once there was one: quoted in the re-ask. */
  readonly repairError: string | undefined;
  /** Why there is no answer, should none come. */
  readonly why: string;
  /** The executor the roster is told about, while its answer is awaited. */
  readonly excluding?: { readonly executor: string; readonly signal: ExecutorSignal } | undefined;
  /** The story's retries for transient faults (`retries`). */
  readonly retries: RetryRules;
  /** Of them, spent by the story so far (this call's included): what the call hands back. */
  readonly transientRetries: number;
}

/** A helper turn as it ended, or that no executor can take the role. */
export type HelperFacts<T> =
  | { readonly kind: 'no-executor' }
  /** An ok turn, with the JSON answer read from its final message. */
  | {
      readonly kind: 'answered';
      readonly executor: string;
      /** False when the helper is also one of the story's coders. */
      readonly independent: boolean;
      /** The run was interrupted by the time the turn ended. */
      readonly interrupted: boolean;
      readonly answer: Extracted<T>;
    }
  /** A turn that did not end ok. */
  | (TurnEnd & {
      readonly kind: 'stopped';
      readonly executor: string;
      /** The story's turn number (`EPICFLOW_ROUND`), for people. */
      readonly round?: number | undefined;
      readonly interrupted: boolean;
      readonly outcome: Exclude<OutcomeClass, 'ok'>;
      readonly missingBinary: boolean;
      readonly detail: string;
      readonly resetAt?: string | undefined;
    });

export type HelperStep<T> =
  /** Pick an executor for the role and run a turn (`repairError`: quoted in the prompt). */
  | { readonly kind: 'ask'; readonly repairError: string | undefined }
  /** Tell the roster the executor stopped. */
  | { readonly kind: 'exclude'; readonly executor: string; readonly signal: ExecutorSignal }
  | {
      readonly kind: 'answer';
      readonly value: T;
      readonly executor: string;
      readonly independent: boolean;
    }
  | Unavailable
  | { readonly kind: 'stop'; readonly status: 'waiting'; readonly reason: string };

export interface HelperDecision<T> {
  readonly call: HelperCall;
  /** Only `say` and `note` effects. */
  readonly effects: readonly StoryEffect[];
  /** Wait this long (returning early when interrupted) before the next step. */
  readonly waitMs: number;
  readonly next: HelperStep<T>;
}

const ask = <T>(call: HelperCall, effects: StoryEffect[] = [], waitMs = 0): HelperDecision<T> => ({
  call: { ...call, excluding: undefined },
  effects,
  waitMs,
  next: { kind: 'ask', repairError: call.repairError },
});

const unavailable = <T>(call: HelperCall, why: string, waitMs = 0): HelperDecision<T> => ({
  call: { ...call, excluding: undefined, why },
  effects: [],
  waitMs,
  next: { kind: 'unavailable', why },
});

/** No retries for transient faults: what a call gets when the story has none configured. */
const NO_RETRIES: RetryRules = { transient: 0, backoffMs: 0 };

/**
 * A call of the story whose retries for transient faults are `retries`, of which
 * it spent `transientRetries` so far.
 */
export function startHelperCall<T>(
  role: HelperRole,
  budget: { readonly retries: RetryRules; readonly transientRetries: number } = {
    retries: NO_RETRIES,
    transientRetries: 0,
  },
): HelperDecision<T> {
  return ask({
    role,
    attempts: 0,
    repairError: undefined,
    why: `no executor can take the ${role} role`,
    retries: budget.retries,
    transientRetries: budget.transientRetries,
  });
}

/** After a helper turn (or finding no executor for it). */
export function decideAfterHelperTurn<T>(
  call: HelperCall,
  facts: HelperFacts<T>,
): HelperDecision<T> {
  if (facts.kind === 'no-executor') return unavailable(call, call.why);
  if (facts.interrupted) {
    return {
      call,
      effects: [],
      waitMs: 0,
      next: { kind: 'stop', status: 'waiting', reason: INTERRUPTED },
    };
  }
  const id = facts.executor;
  if (facts.kind === 'answered') {
    const { answer } = facts;
    if (answer.ok) {
      return {
        call,
        effects: [],
        waitMs: 0,
        next: { kind: 'answer', value: answer.value, executor: id, independent: facts.independent },
      };
    }
    if (call.repairError !== undefined) {
      return unavailable(call, `${id} gave no valid answer: ${answer.error}`);
    }
    return ask({ ...call, repairError: answer.error }, [
      {
        kind: 'say',
        message: `${call.role} answer of ${id} unreadable (${answer.error}); asking once more`,
      },
    ]);
  }
  const fault = transientFault(facts);
  if (fault !== null) {
    const turn = `${call.role} turn${facts.round === undefined ? '' : ` ${facts.round}`}`;
    const retry = retryTransient(call.retries, call.transientRetries, fault, turn);
    if (retry !== null) {
      return ask(
        { ...call, transientRetries: retry.used },
        [
          { kind: 'say', message: retry.message },
          { kind: 'note', notes: [retry.message] },
        ],
        retry.waitMs,
      );
    }
  }
  const counted = { ...call, attempts: call.attempts + 1 };
  if (facts.outcome === 'failed' && !facts.missingBinary) {
    const spent = afterRetries(fault === null ? 0 : call.transientRetries);
    return unavailable(counted, `${id} failed${spent}: ${shortDetail(facts.detail)}`);
  }
  const signal = executorSignal(facts);
  return {
    call: { ...counted, excluding: { executor: id, signal } },
    effects: [],
    waitMs: 0,
    next: { kind: 'exclude', executor: id, signal },
  };
}

/** After the roster heard of the helper's stop: another attempt, or no answer. */
export function decideAfterHelperExclusion<T>(
  call: HelperCall,
  facts: { readonly exclusion: string | null },
): HelperDecision<T> {
  const { excluding } = call;
  if (excluding === undefined) {
    throw new EpicflowError(
      'internal',
      'helper call: a roster answer while no executor was being excluded',
    );
  }
  const { executor, signal } = excluding;
  const why =
    signal.kind === 'missing-binary'
      ? `${executor}: ${shortDetail(signal.detail)}`
      : `${executor} stopped: ${facts.exclusion ?? signal.outcome}`;
  // Not excluded (a rate limit below the roster's threshold): the same call waits a little first.
  const waitMs =
    signal.kind === 'signal' && facts.exclusion === null
      ? RATE_LIMIT_BACKOFF_MS * call.attempts
      : 0;
  const next = { ...call, why };
  if (call.attempts >= HELPER_ATTEMPTS) return unavailable(next, why, waitMs);
  return ask(next, [], waitMs);
}
