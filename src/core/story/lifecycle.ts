/**
 * The rounds of one story as a reducer: what was decided so far is data
 * (`StoryRounds`), and each decision takes the facts of the step that just ran
 * (a coder turn, the checks, the judge, the verifier, the roster's answer) and
 * returns the new state, what to tell and record first (`effects`, in order),
 * and the next step (`next`). The engine performs the steps and never decides.
 *
 * The policy, in one place: a coder turn's BLOCKED_ON claim is pushed back once
 * (a verifier settles a claim the plan cannot); failing gates or oracle findings
 * get `fixRounds` fix rounds; paths outside the perimeter are shown to the coder
 * once, then put back and everything checked again; forbidden paths refuse the
 * story; "no changes" passes only when the judge finds the work in place; the
 * judge gets `judge.rounds` revision rounds; a turn that ended on a transient
 * fault (an outage, a crash of the CLI, a network timeout) runs again after a
 * backoff while the story's `retries.transient` last; an executor that stops
 * hands the story over at most `MAX_HANDOVERS` times, and a rate limit below
 * the roster's threshold retries after a growing backoff.
 */
import type { ExecutorConfig } from '../config/types.js';
import { EpicflowError } from '../errors.js';
import type { OutcomeClass, Stall } from '../executor.js';
import type { GateRun, GateVerdict } from '../gates/index.js';
import {
  formatScores,
  judgeOutcome,
  REUSED_VERDICT_NOTE,
  REUSED_VERIFIER_NOTE,
  verdictFindings,
  type JudgeVerdict,
} from '../judge/index.js';
import type { Halt, StoryProgress } from '../model.js';
import { describeStrays, isClean, strayPaths, type PerimeterResult } from '../perimeter/index.js';
import type { PromptFeedback } from '../prompt/index.js';
import type { RosterExhausted } from '../roster/index.js';
import { blockingReason, describeVerdicts, INTERRUPTED, plural, shortDetail } from './texts.js';
import {
  afterRetries,
  retryTransient,
  transientFault,
  type RetryRules,
  type TurnEnd,
} from './transient.js';

/** At most this many handovers per story. */
export const MAX_HANDOVERS = 2;

/** Waits before retrying a rate-limited turn: 1 s, then 2 s (the third one excludes). */
export const RATE_LIMIT_BACKOFF_MS = 1000;

/** What the config allows a story, fixed for all its rounds. */
export interface RoundRules {
  /** `fixRounds`: turns that may follow failing gates or oracle findings. */
  readonly fixRounds: number;
  /** `judge.rounds` when a judge is configured; undefined: no judge. */
  readonly judgeRounds: number | undefined;
  /** `judge.deferNonBlocking`: only critical findings block; the others are deferred. */
  readonly deferNonBlocking?: boolean;
  /** True when some executor has the verifier role. */
  readonly verifier: boolean;
  /** `retries`: the story's budget of retries for transient faults, and the backoff. */
  readonly retries: RetryRules;
  /**
   * `mergeRevisions`: turns a story gets when its checked commit turned the merged epic
   * head red (the merge undone), before it fails (absent: none).
   */
  readonly mergeRevisions?: number;
  /**
   * The rounds of a task that is not the story's last (core/story/tasks.ts): a commit
   * that passed the checks ends them (no judge, no merge yet), and a turn that changed
   * nothing completes the task.
   */
  readonly taskEnd?: boolean;
}

/** A BLOCKED_ON claim of a coder and what the plan answers it (`answerBlocked`). */
export interface BlockedClaim {
  readonly claim: string;
  /** The pushback text from the plan. */
  readonly answer: string;
  /** The plan edit that would resolve a real claim. */
  readonly suggestedEdit: string;
  /** True when the plan alone settles the claim (no verifier is asked). */
  readonly decided: boolean;
}

/** The step whose result the state waits for, with what deciding on it needs. */
export type Awaiting =
  | { readonly step: 'turn' }
  | { readonly step: 'exclusion' }
  | { readonly step: 'handover'; readonly why: string; readonly exhausted: boolean }
  | { readonly step: 'verifier'; readonly claim: BlockedClaim }
  /** `afterCatchUp`: the branch just took the epic head, which other stories moved. */
  | { readonly step: 'check'; readonly afterCatchUp?: true }
  /** The branch takes the epic head before the judge reads it. */
  | { readonly step: 'catch-up' }
  /** The checks again, after paths outside the perimeter were put back. */
  | { readonly step: 'recheck' }
  /** `inPlace`: the branch has no changes and the judge says whether the work is there. */
  | { readonly step: 'judge'; readonly inPlace: boolean }
  | { readonly step: 'end' };

/** What was decided so far about one story's rounds. */
export interface StoryRounds {
  readonly rules: RoundRules;
  readonly awaiting: Awaiting;
  /** The coder now: the first one, or the one the story was handed over to. */
  readonly executor: ExecutorConfig;
  /** Every coder of the story so far, in order. */
  readonly chain: readonly string[];
  readonly handovers: number;
  /** Rate-limited turns retried so far (reset when an executor stops). */
  readonly rateRetries: number;
  /** Turns of any kind retried after a transient fault so far (the story's budget). */
  readonly transientRetries: number;
  /** Merge revisions spent so far (absent: none). */
  readonly mergeRevisions?: number;
  /** The feedback of the coder turn that runs (or ran) last. */
  readonly feedback: PromptFeedback | undefined;
  readonly fixRoundsLeft: number;
  /** True once paths outside the perimeter were shown to the coder. */
  readonly perimeterShown: boolean;
  /** True once a BLOCKED_ON claim was pushed back. */
  readonly blockedPushback: boolean;
  readonly judgeRevisions: number;
  /** The commit that passed every check: what is merged ('' none yet). */
  readonly checked: string;
  /** What the last check found blocking, when it sent the coder a fix round. */
  readonly blocking?: string | undefined;
}

/** How an executor that stopped is reported to the roster. */
export type ExecutorSignal =
  | { readonly kind: 'missing-binary'; readonly detail: string }
  | {
      readonly kind: 'signal';
      readonly outcome: OutcomeClass;
      readonly resetAt: string | undefined;
      readonly detail: string;
    };

/** The next step, for the engine to perform. */
export type StoryAction =
  /** A coder turn of `state.executor` with this feedback, after waiting `waitMs`. */
  | {
      readonly kind: 'code';
      readonly feedback: PromptFeedback | undefined;
      readonly waitMs: number;
    }
  /** Tell the roster the executor stopped; it answers with an exclusion or none. */
  | { readonly kind: 'exclude'; readonly executor: string; readonly signal: ExecutorSignal }
  /** Ask the roster for the next coder, excluding `state.chain`. */
  | { readonly kind: 'hand-over' }
  /** Ask a verifier whether the claim is real. */
  | { readonly kind: 'verify'; readonly claim: BlockedClaim }
  /** Gates against the baseline, oracle guard and perimeter of the branch head. */
  | { readonly kind: 'check' }
  /** Put these paths back as on the epic branch, commit, and check again. */
  | { readonly kind: 'restore'; readonly paths: readonly string[] }
  /**
   * Take the epic head into the branch (epic side wins, as at the start) when other
   * stories moved it since, so the judge reads the story as it would be merged.
   */
  | { readonly kind: 'catch-up' }
  | { readonly kind: 'judge'; readonly inPlace: boolean }
  /** Merge this commit into the epic branch. */
  | { readonly kind: 'integrate'; readonly commit: string }
  /** Done without a merge: the work was already in place. */
  | { readonly kind: 'in-place' }
  /** The task's rounds end (`taskEnd`): at this checked commit, or where the branch is. */
  | { readonly kind: 'task-done'; readonly commit: string | undefined }
  | { readonly kind: 'stop'; readonly status: 'failed' | 'waiting'; readonly reason: string };

/** What the engine tells and records before the next step, in this order. */
export type StoryEffect =
  /** A `story` event. */
  | { readonly kind: 'say'; readonly message: string }
  /** Notes appended to the record, in one save. */
  | { readonly kind: 'note'; readonly notes: readonly string[] }
  /** The record's executors are now these. */
  | { readonly kind: 'executors'; readonly executors: readonly string[] }
  /** Stop launching stories. */
  | { readonly kind: 'halt'; readonly halt: Halt }
  /** The record's progress: this commit passed these checks (a resume starts there). */
  | { readonly kind: 'progress'; readonly progress: StoryProgress }
  /** The judge's findings below critical the story passed with (`judge.deferNonBlocking`). */
  | { readonly kind: 'deferred'; readonly findings: readonly string[] };

export interface Decision {
  readonly state: StoryRounds;
  readonly effects: readonly StoryEffect[];
  readonly next: StoryAction;
}

/** A coder turn as it ended. */
export interface TurnFacts extends TurnEnd {
  /** The run was interrupted (SIGINT/SIGTERM) by the time the turn ended. */
  readonly interrupted: boolean;
  /** The story's turn number (`EPICFLOW_ROUND`), for people. */
  readonly round?: number | undefined;
  readonly outcome: OutcomeClass;
  readonly missingBinary: boolean;
  readonly detail: string;
  readonly resetAt?: string | undefined;
  /** Its BLOCKED_ON claim, answered from the plan, if it made one. */
  readonly blocked?: BlockedClaim | undefined;
  /** The turn committed nothing: the branch is as the round before left it. */
  readonly unchanged?: boolean | undefined;
}

/** No answer from a judge or verifier, and why. */
export interface Unavailable {
  readonly kind: 'unavailable';
  readonly why: string;
}

/** What a judge or verifier call spent of the story's retries for transient faults. */
export interface HelperRetries {
  /** The story's transient retries once the call ended; undefined: as before it. */
  readonly transientRetries?: number | undefined;
}

/** The verifier's answer on a claim, or why there is none. */
export type VerifierFacts = HelperRetries &
  (
    | Unavailable
    | {
        readonly kind: 'answer';
        readonly executor: string;
        readonly real: boolean;
        readonly reason: string;
        /** The answer a run before gave over the same fingerprint (none was asked now). */
        readonly reused?: boolean;
      }
  );

/** The checks of one commit. */
export interface CheckFacts {
  readonly interrupted: boolean;
  /** The branch changes nothing against the epic base. */
  readonly empty: boolean;
  readonly verdicts: readonly GateVerdict[];
  readonly oracle: readonly string[];
  readonly perimeter: PerimeterResult;
  readonly runs: readonly Pick<GateRun, 'command' | 'output'>[];
  /** The commit every check judged. */
  readonly commit: string;
}

/** The judge's verdict, or why there is none. */
export type JudgeFacts = HelperRetries &
  (
    | Unavailable
    | {
        readonly kind: 'verdict';
        readonly verdict: JudgeVerdict;
        readonly executor: string;
        /** False when the judge also coded the story. */
        readonly independent: boolean;
        /** The verdict a run before gave over the same fingerprint (no judge was asked now). */
        readonly reused?: boolean;
      }
  );

/** The state with what a helper call spent of the story's retries. */
function withHelperRetries(state: StoryRounds, facts: HelperRetries): StoryRounds {
  return facts.transientRetries === undefined
    ? state
    : { ...state, transientRetries: facts.transientRetries };
}

/** The roster's answer to a stopped executor. */
export interface ExclusionFacts {
  /** The exclusion's reason; null: a rate limit below the threshold, no exclusion. */
  readonly exclusion: string | null;
  /** Whether every coder is now out, as the roster says after the signal. */
  readonly exhausted: RosterExhausted | null;
}

/** The roster's next coder, or none. */
export interface HandoverFacts {
  readonly next: ExecutorConfig | null;
}

const say = (message: string): StoryEffect => ({ kind: 'say', message });

/** How a turn that stopped on infrastructure is reported to the roster. */
export function executorSignal(turn: {
  readonly outcome: OutcomeClass;
  readonly missingBinary: boolean;
  readonly detail: string;
  readonly resetAt?: string | undefined;
}): ExecutorSignal {
  return turn.missingBinary
    ? { kind: 'missing-binary', detail: turn.detail }
    : { kind: 'signal', outcome: turn.outcome, resetAt: turn.resetAt, detail: turn.detail };
}

function stop(
  state: StoryRounds,
  status: 'failed' | 'waiting',
  reason: string,
  effects: readonly StoryEffect[] = [],
): Decision {
  return {
    state: { ...state, awaiting: { step: 'end' } },
    effects,
    next: { kind: 'stop', status, reason },
  };
}

function code(
  state: StoryRounds,
  feedback: PromptFeedback | undefined,
  effects: readonly StoryEffect[] = [],
  waitMs = 0,
): Decision {
  return {
    state: { ...state, awaiting: { step: 'turn' }, feedback },
    effects,
    next: { kind: 'code', feedback, waitMs },
  };
}

function expecting<S extends Awaiting['step']>(
  state: StoryRounds,
  step: S,
): Extract<Awaiting, { step: S }> {
  if (state.awaiting.step !== step) {
    throw new EpicflowError(
      'internal',
      `story rounds: a ${step} result while waiting for a ${state.awaiting.step} result`,
    );
  }
  return state.awaiting as Extract<Awaiting, { step: S }>;
}

/** The rounds of a story that starts (or resumes) with `executor`; `chain` ends with it. */
export function startRounds(
  rules: RoundRules,
  executor: ExecutorConfig,
  chain: readonly string[],
): Decision {
  const state: StoryRounds = {
    rules,
    awaiting: { step: 'turn' },
    executor,
    chain,
    handovers: 0,
    rateRetries: 0,
    transientRetries: 0,
    feedback: undefined,
    fixRoundsLeft: rules.fixRounds,
    perimeterShown: false,
    blockedPushback: false,
    judgeRevisions: 0,
    checked: '',
  };
  return code(state, undefined);
}

const missingDependency = (c: BlockedClaim): string =>
  `missing dependency: ${c.claim} (suggested plan edit: ${c.suggestedEdit})`;

/** The claim is pushed back once, with the plan's answer (and the verifier's, if any). */
function pushBack(
  state: StoryRounds,
  claim: BlockedClaim,
  rebuttal: string,
  effects: readonly StoryEffect[] = [],
): Decision {
  return code(
    { ...state, blockedPushback: true },
    { blocked: { claim: claim.claim, answer: rebuttal } },
    [...effects, say(`BLOCKED_ON rejected once: ${claim.claim}`)],
  );
}

/**
 * After a coder turn: an interrupt waits; an ok turn is checked, unless it
 * claims BLOCKED_ON (pushed back once, verified when the plan cannot settle it
 * and a verifier exists; a repeated claim fails as a missing dependency); a
 * transient fault runs the turn again while the story's retries last; a failed
 * turn fails the story; an executor that stopped goes to the roster.
 */
export function decideAfterTurn(state: StoryRounds, facts: TurnFacts): Decision {
  expecting(state, 'turn');
  if (facts.interrupted) return stop(state, 'waiting', INTERRUPTED);
  const id = state.executor.id;
  if (facts.stalled !== undefined) return stalled(state, facts.stalled, facts.round);
  if (facts.outcome === 'ok') {
    const claim = facts.blocked;
    if (claim === undefined && facts.unchanged === true && taskTurn(state)) {
      // A task that needed no change is completed, not failed.
      return taskDone(state, undefined, [say('the task changed nothing: completed')]);
    }
    if (claim === undefined && facts.unchanged === true && isFixRound(state.feedback)) {
      // The same diff as the round the gates failed on: checking it again tells nothing.
      const stall: Stall = { signal: 'no-progress', detail: 'it changed nothing' };
      return stalled(state, stall, facts.round);
    }
    if (claim === undefined) {
      return {
        state: { ...state, awaiting: { step: 'check' } },
        effects: [],
        next: { kind: 'check' },
      };
    }
    if (state.blockedPushback) return stop(state, 'failed', missingDependency(claim));
    if (!claim.decided && state.rules.verifier) {
      return {
        state: { ...state, awaiting: { step: 'verifier', claim } },
        effects: [],
        next: { kind: 'verify', claim },
      };
    }
    return pushBack(state, claim, claim.answer);
  }
  const fault = transientFault(facts);
  if (fault !== null) {
    const turn = `coder turn${facts.round === undefined ? '' : ` ${facts.round}`}`;
    const retry = retryTransient(state.rules.retries, state.transientRetries, fault, turn);
    if (retry !== null) {
      return code(
        { ...state, transientRetries: retry.used },
        state.feedback,
        [say(retry.message), { kind: 'note', notes: [retry.message] }],
        retry.waitMs,
      );
    }
  }
  if (facts.outcome === 'failed' && !facts.missingBinary) {
    const spent = afterRetries(fault === null ? 0 : state.transientRetries);
    return stop(state, 'failed', `coder turn failed (${id})${spent}: ${shortDetail(facts.detail)}`);
  }
  // Not the story's work: the roster hears of it (a missing CLI puts the executor out for the run).
  return {
    state: { ...state, awaiting: { step: 'exclusion' } },
    effects: [],
    next: { kind: 'exclude', executor: id, signal: executorSignal(facts) },
  };
}

function withoutOnce(feedback: PromptFeedback | undefined): PromptFeedback {
  if (feedback === undefined) return {};
  const { takeover: _takeover, blocked: _blocked, stalled: _stalled, ...rest } = feedback;
  return rest;
}

/** A task's own turn (`taskEnd`), not a round fed with failures, strays or findings. */
function taskTurn(state: StoryRounds): boolean {
  const f = state.feedback;
  return (
    state.rules.taskEnd === true &&
    !isFixRound(f) &&
    f?.perimeter === undefined &&
    f?.judge === undefined &&
    f?.blocked === undefined
  );
}

function taskDone(
  state: StoryRounds,
  commit: string | undefined,
  effects: readonly StoryEffect[],
): Decision {
  return {
    state: { ...state, awaiting: { step: 'end' } },
    effects,
    next: { kind: 'task-done', commit },
  };
}

/** A round fed with new gate failures or weakened tests. */
function isFixRound(feedback: PromptFeedback | undefined): boolean {
  return (feedback?.gateFailures?.length ?? 0) > 0 || (feedback?.oracle?.length ?? 0) > 0;
}

/**
 * A turn stopped as stalled (or a fix round that changed nothing) counts as a failed
 * round: another turn, told so, while fix rounds are left; then the story fails.
 */
function stalled(state: StoryRounds, stall: Stall, round: number | undefined): Decision {
  const turn = round === undefined ? 'the coder turn' : `round ${round}`;
  const what = `${turn} stalled (${stall.signal}): ${stall.detail}`;
  if (state.fixRoundsLeft <= 0) {
    const why = `stalled (${state.executor.id}): ${stall.detail}`;
    // A fix round that changed nothing leaves the failures it was given standing: they come first.
    const reason =
      stall.signal === 'no-progress' && state.blocking !== undefined
        ? `gates failed: ${state.blocking} (${why})`
        : why;
    return stop(state, 'failed', reason, [{ kind: 'note', notes: [what] }]);
  }
  return code(
    { ...state, fixRoundsLeft: state.fixRoundsLeft - 1 },
    // What the stalled turn was asked stands (a takeover or a claim's answer was said once).
    { ...withoutOnce(state.feedback), stalled: stall.detail },
    [say(`${what}; another round`), { kind: 'note', notes: [what] }],
  );
}

/**
 * After the roster heard of a stopped executor: no exclusion (a rate limit below the
 * threshold, which bounds the retries) retries the same executor after a backoff;
 * an exclusion halts launching when no coder is left, and hands the story over
 * unless it was handed over `MAX_HANDOVERS` times already.
 */
export function decideAfterExclusion(state: StoryRounds, facts: ExclusionFacts): Decision {
  expecting(state, 'exclusion');
  const id = state.executor.id;
  if (facts.exclusion === null) {
    const rateRetries = state.rateRetries + 1;
    return code(
      { ...state, rateRetries },
      state.feedback,
      [say(`${id} was rate limited; trying again`)],
      RATE_LIMIT_BACKOFF_MS * rateRetries,
    );
  }
  const why = facts.exclusion;
  const effects: StoryEffect[] = [say(`${id} stopped: ${why}`)];
  const { exhausted } = facts;
  if (exhausted !== null) {
    effects.push({
      kind: 'halt',
      halt: {
        kind: 'roster-exhausted',
        message: exhausted.message,
        ...(exhausted.until === undefined ? {} : { until: exhausted.until }),
      },
    });
  }
  const next = { ...state, rateRetries: 0 };
  if (state.handovers >= MAX_HANDOVERS) {
    return stop(next, 'failed', `${id} stopped (${why}) after ${MAX_HANDOVERS} handovers`, effects);
  }
  return {
    state: { ...next, awaiting: { step: 'handover', why, exhausted: exhausted !== null } },
    effects,
    next: { kind: 'hand-over' },
  };
}

/**
 * After asking the roster for the next coder: none fails the story, or, with the
 * roster exhausted, leaves it waiting for an executor (infrastructure, not the
 * story's work); one takes over with the same feedback and the takeover note.
 */
export function decideAfterHandover(state: StoryRounds, facts: HandoverFacts): Decision {
  const { why, exhausted } = expecting(state, 'handover');
  const from = state.executor.id;
  const { next } = facts;
  if (next === null) {
    return stop(
      state,
      exhausted ? 'waiting' : 'failed',
      `${from} stopped (${why}) and no other executor can take over`,
    );
  }
  const chain = [...state.chain, next.id];
  return code(
    { ...state, executor: next, chain, handovers: state.handovers + 1 },
    { ...(state.feedback ?? {}), takeover: { from, reason: why } },
    [say(`handed over from ${from} to ${next.id}`), { kind: 'executors', executors: chain }],
  );
}

/** After the verifier: a real claim fails the story; otherwise the claim is pushed back. */
export function decideAfterVerifier(before: StoryRounds, facts: VerifierFacts): Decision {
  const { claim } = expecting(before, 'verifier');
  const state = withHelperRetries(before, facts);
  if (facts.kind === 'unavailable') {
    return pushBack(state, claim, claim.answer, [
      say(`verifier unavailable (${facts.why}); answering from the plan`),
    ]);
  }
  const reused = facts.reused === true ? reusedEffects(REUSED_VERIFIER_NOTE) : [];
  if (facts.real) {
    return stop(
      state,
      'failed',
      `${missingDependency(claim)}; confirmed by ${facts.executor}: ${facts.reason}`,
      [...reused, say(`BLOCKED_ON confirmed by ${facts.executor}: ${facts.reason}`)],
    );
  }
  return pushBack(
    state,
    claim,
    `${claim.answer}\nA verifier checked your claim and found it is not real: ${facts.reason}`,
    reused,
  );
}

/** A kept answer reused instead of a call: said, and noted on the story for its report. */
function reusedEffects(note: string): StoryEffect[] {
  return [say(note), { kind: 'note', notes: [note] }];
}

/** A commit that passed every check goes to the judge, or is merged. */
function passed(state: StoryRounds, commit: string, told: readonly StoryEffect[]): Decision {
  const checked = { ...state, checked: commit };
  const effects = [...told, { kind: 'progress', progress: { commit, passed: 'checks' } } as const];
  if (state.rules.taskEnd === true) return taskDone(checked, commit, effects);
  if (state.rules.judgeRounds === undefined) {
    return {
      state: { ...checked, awaiting: { step: 'end' } },
      effects,
      next: { kind: 'integrate', commit },
    };
  }
  return {
    state: { ...checked, awaiting: { step: 'catch-up' } },
    effects,
    next: { kind: 'catch-up' },
  };
}

/** What catching up before the judge did. */
export interface CatchUpFacts {
  /** The epic head had moved since the branch last took it: the branch took it now. */
  readonly moved: boolean;
}

/**
 * Before the judge. An epic head that did not move: the judge reads the checked commit.
 * One that moved (stories merged meanwhile) was taken into the branch, so everything is
 * checked again on the commit that is now the story, before any judge reads it.
 */
export function decideAfterCatchUp(state: StoryRounds, facts: CatchUpFacts): Decision {
  expecting(state, 'catch-up');
  if (!facts.moved) {
    return {
      state: { ...state, awaiting: { step: 'judge', inPlace: false } },
      effects: [],
      next: { kind: 'judge', inPlace: false },
    };
  }
  return {
    state: { ...state, awaiting: { step: 'check', afterCatchUp: true } },
    effects: [
      say('took the epic head before the judge (stories merged meanwhile): checking again'),
    ],
    next: { kind: 'check' },
  };
}

/** The gates that fail anew, as the coder's feedback shows them. */
function newGateFailures(facts: CheckFacts): NonNullable<PromptFeedback['gateFailures']> {
  return facts.verdicts
    .filter((v) => v.status === 'new')
    .map((v) => ({
      command: v.command,
      lines: v.newLines,
      output: facts.runs.find((r) => r.command === v.command)?.output ?? '',
    }));
}

/**
 * Gates the story passed before it took the epic head fail after: what other stories
 * merged clashes with it. Like a merge that turns the epic head red, this spends a merge
 * revision (the coder gets the red lines), not a fix round, and fails without one.
 */
function redAfterCatchUp(state: StoryRounds, facts: CheckFacts): Decision {
  const used = state.mergeRevisions ?? 0;
  const allowed = state.rules.mergeRevisions ?? 0;
  const blocking = blockingReason(facts);
  if (used >= allowed) {
    return stop(state, 'failed', `gates failed after taking the epic head: ${blocking}`);
  }
  const message = `the gates failed after taking the epic head: merge revision ${used + 1} of ${allowed}`;
  return code(
    { ...state, mergeRevisions: used + 1, blocking },
    {
      gateFailures: newGateFailures(facts),
      oracle: facts.oracle,
    },
    [say(message), { kind: 'note', notes: [message] }],
  );
}

/**
 * After the checks. An interrupt waits (gates it killed prove nothing). No changes:
 * only the judge can find the work in place. New gate failures or oracle findings:
 * a fix round while any is left (with the strays, if not shown yet). Then strays not
 * shown yet: one perimeter round. Forbidden paths refuse the story. Strays shown:
 * put back, and everything checked again on the commit that is now the story.
 */
export function decideAfterCheck(state: StoryRounds, facts: CheckFacts): Decision {
  if (state.awaiting.step === 'recheck') return afterRecheck(state, facts);
  const { afterCatchUp } = expecting(state, 'check');
  if (facts.interrupted) return stop(state, 'waiting', INTERRUPTED);
  if (facts.empty) {
    if (state.rules.taskEnd === true) return taskDone(state, undefined, []);
    if (state.rules.judgeRounds === undefined) return stop(state, 'failed', 'no changes');
    return {
      state: { ...state, awaiting: { step: 'judge', inPlace: true } },
      effects: [],
      next: { kind: 'judge', inPlace: true },
    };
  }
  const failing = facts.verdicts.filter((v) => v.status === 'new');
  const strays = isClean(facts.perimeter) ? [] : describeStrays(facts.perimeter);
  if (failing.length > 0 || facts.oracle.length > 0) {
    if (afterCatchUp === true) return redAfterCatchUp(state, facts);
    if (state.fixRoundsLeft <= 0) {
      return stop(state, 'failed', `gates failed: ${blockingReason(facts)}`);
    }
    const feedback: PromptFeedback = {
      gateFailures: newGateFailures(facts),
      oracle: facts.oracle,
      ...(strays.length > 0 && !state.perimeterShown ? { perimeter: strays } : {}),
    };
    return code(
      {
        ...state,
        fixRoundsLeft: state.fixRoundsLeft - 1,
        perimeterShown: state.perimeterShown || strays.length > 0,
        blocking: blockingReason(facts),
      },
      feedback,
      [say(`gates failed: ${describeVerdicts(facts.verdicts, 1) || facts.oracle.join('; ')}`)],
    );
  }
  const effects: StoryEffect[] = [say('gates passed')];
  if (strays.length > 0 && !state.perimeterShown) {
    return code({ ...state, perimeterShown: true }, { perimeter: strays }, [
      ...effects,
      say(`changes outside its perimeter: ${strayPaths(facts.perimeter).join(', ')}`),
    ]);
  }
  if (facts.perimeter.forbidden.length > 0) {
    return stop(
      state,
      'failed',
      `refused: ${facts.perimeter.forbidden.map((f) => `${f.path} (${f.reason})`).join(', ')}`,
      effects,
    );
  }
  if (strays.length > 0) {
    return {
      state: { ...state, checked: facts.commit, awaiting: { step: 'recheck' } },
      effects,
      next: { kind: 'restore', paths: strayPaths(facts.perimeter) },
    };
  }
  return passed(state, facts.commit, effects);
}

/** The checks after restoring: the gates must hold, and the perimeter be clean, without the restored paths. */
function afterRecheck(state: StoryRounds, facts: CheckFacts): Decision {
  if (facts.empty) {
    return stop(state, 'failed', 'no changes (everything it changed was outside its perimeter)');
  }
  const blocking = blockingReason(facts);
  if (blocking !== '') {
    return stop(
      state,
      'failed',
      `gates failed after restoring paths outside the perimeter: ${blocking}`,
    );
  }
  if (!isClean(facts.perimeter)) {
    const left = [...strayPaths(facts.perimeter), ...facts.perimeter.forbidden.map((f) => f.path)];
    return stop(
      state,
      'failed',
      `still outside its perimeter after restoring: ${[...new Set(left)].join(', ')}`,
    );
  }
  return passed(state, facts.commit, []);
}

/**
 * After the judge: cleared merges the checked commit (or, for a branch without
 * changes, ends the story as already in place); not cleared gets a revision round
 * with the findings while `judge.rounds` allow, and fails after. Under
 * `judge.deferNonBlocking` a verdict with no critical finding clears, and its other
 * findings are deferred (`judgeOutcome`).
 */
export function decideAfterJudge(before: StoryRounds, facts: JudgeFacts): Decision {
  const { inPlace } = expecting(before, 'judge');
  const state = withHelperRetries(before, facts);
  if (facts.kind === 'unavailable') return stop(state, 'failed', `judge unavailable: ${facts.why}`);
  const { verdict, executor } = facts;
  const defer = state.rules.deferNonBlocking === true;
  const outcome = judgeOutcome(verdict, defer);
  const findings = verdictFindings(verdict);
  const reused = facts.reused === true ? reusedEffects(REUSED_VERDICT_NOTE) : [];
  const told = say(
    outcome.passes && outcome.deferred.length > 0
      ? `judge ${executor}: nothing critical (${formatScores(verdict)}); deferred: ${outcome.deferred.join('; ')}`
      : `judge ${executor}: ${verdict.cleared ? 'cleared' : 'not cleared'} (${formatScores(verdict)})` +
          (findings.length > 0 && !verdict.cleared ? `: ${findings.join('; ')}` : ''),
  );
  const revisions = state.judgeRevisions;
  if (outcome.passes) {
    const n = outcome.deferred.length;
    const deferred = n === 0 ? '' : `; ${n} finding${n === 1 ? '' : 's'} deferred`;
    const notes = [
      `judge ${executor} cleared` +
        (revisions > 0 ? ` after ${plural(revisions, 'revision')}` : '') +
        ` (${formatScores(verdict)})${deferred}`,
      ...(facts.independent ? [] : [`judge was not independent: ${executor} also coded the story`]),
    ];
    const progress: StoryEffect[] = inPlace
      ? []
      : [{ kind: 'progress', progress: { commit: state.checked, passed: 'judge' } }];
    // Under deferNonBlocking the record always says what the merge deferred (none is news too).
    const kept: StoryEffect[] = defer ? [{ kind: 'deferred', findings: outcome.deferred }] : [];
    return {
      state: { ...state, awaiting: { step: 'end' } },
      effects: [...reused, told, { kind: 'note', notes }, ...kept, ...progress],
      next: inPlace ? { kind: 'in-place' } : { kind: 'integrate', commit: state.checked },
    };
  }
  if (revisions >= (state.rules.judgeRounds ?? 0)) {
    const blocking = outcome.blocking.join('; ');
    return stop(
      state,
      'failed',
      inPlace
        ? `no changes, and the judge did not find the story in place after ${plural(revisions, 'revision')}: ${blocking}`
        : `judge did not clear the story after ${plural(revisions, 'revision')}: ${blocking}`,
      [...reused, told],
    );
  }
  return code(
    { ...state, judgeRevisions: revisions + 1 },
    inPlace ? { noChanges: true, judge: { findings } } : { judge: { findings } },
    [...reused, told],
  );
}

/** The merged epic head failed its gates with the story's checked commit; the merge was undone. */
export interface RedMergeFacts {
  /** The gates' new failures on the merged tree. */
  readonly failures: PromptFeedback['gateFailures'] & object;
  /** The story's failure when no revision is left (`epic gates failed after merging; …`). */
  readonly reason: string;
}

/**
 * A story whose merge turned the epic head red goes back to its coder with the new red
 * lines, on its branch caught up with the epic head, while `mergeRevisions` last; then
 * it fails as before.
 */
export function decideAfterRedMerge(state: StoryRounds, facts: RedMergeFacts): Decision {
  const used = state.mergeRevisions ?? 0;
  const allowed = state.rules.mergeRevisions ?? 0;
  if (used >= allowed) return stop(state, 'failed', facts.reason);
  const message = `the merged epic head failed its gates (merge undone): merge revision ${used + 1} of ${allowed}, on the epic head`;
  return code({ ...state, mergeRevisions: used + 1 }, { gateFailures: facts.failures }, [
    say(message),
    { kind: 'note', notes: [message] },
  ]);
}
