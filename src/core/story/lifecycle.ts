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
import type { Stall } from '../executor.js';
import {
  formatScores,
  judgeOutcome,
  REUSED_VERDICT_NOTE,
  REUSED_VERIFIER_NOTE,
  verdictFindings,
} from '../judge/index.js';
import type { PromptFeedback } from '../prompt/index.js';
import { INTERRUPTED, plural, shortDetail } from './texts.js';
import { afterRetries, retryTransient, transientFault } from './transient.js';
import {
  executorSignal,
  MAX_HANDOVERS,
  RATE_LIMIT_BACKOFF_MS,
  type RoundRules,
  type BlockedClaim,
  type StoryRounds,
  type StoryEffect,
  type Decision,
  type TurnFacts,
  type VerifierFacts,
  type JudgeFacts,
  type ExclusionFacts,
  type HandoverFacts,
} from './rounds.js';
import {
  say,
  stop,
  code,
  expecting,
  taskDone,
  reusedEffects,
  withHelperRetries,
} from './decision-kit.js';

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
    const reason = `coder turn failed (${id})${spent}: ${shortDetail(facts.detail)}`;
    return stop(state, 'failed', reason, [], facts.timedOut === true ? 'timed-out' : undefined);
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
    f?.review === undefined &&
    f?.blocked === undefined
  );
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
    const red = stall.signal === 'no-progress' && state.blocking !== undefined;
    const reason = red ? `gates failed: ${state.blocking} (${why})` : why;
    return stop(
      state,
      'failed',
      reason,
      [{ kind: 'note', notes: [what] }],
      red ? 'still-red' : undefined,
    );
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
  const revisions = state.judgeRevisions;
  const round = revisions + 1;
  const scores = { ...verdict.scores };
  const told = say(
    outcome.passes && outcome.deferred.length > 0
      ? `judge ${executor}: nothing critical (${formatScores(verdict)}); deferred: ${outcome.deferred.join('; ')}`
      : `judge ${executor}: ${verdict.cleared ? 'cleared' : 'not cleared'} (${formatScores(verdict)})` +
          (findings.length > 0 && !verdict.cleared ? `: ${findings.join('; ')}` : ''),
    {
      evaluation: 'judge',
      round,
      cleared: verdict.cleared,
      findings: findings.length,
      scores,
      executors: [executor],
    },
  );
  const last = !outcome.passes && revisions >= (state.rules.judgeRounds ?? 0);
  const evaluated: StoryEffect = {
    kind: 'evaluation',
    evaluation: {
      kind: 'judge',
      round,
      commit: state.checked,
      cleared: verdict.cleared,
      findings,
      scores,
      executors: [executor],
      outcome: outcome.passes ? 'passed' : last ? 'failed' : 'fixing',
    },
  };
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
      effects: [...reused, told, evaluated, { kind: 'note', notes }, ...kept, ...progress],
      next: inPlace ? { kind: 'in-place' } : { kind: 'integrate', commit: state.checked },
    };
  }
  if (last) {
    const blocking = outcome.blocking.join('; ');
    return stop(
      state,
      'failed',
      inPlace
        ? `no changes, and the judge did not find the story in place after ${plural(revisions, 'revision')}: ${blocking}`
        : `judge did not clear the story after ${plural(revisions, 'revision')}: ${blocking}`,
      [...reused, told, evaluated],
    );
  }
  return code(
    { ...state, judgeRevisions: revisions + 1 },
    inPlace ? { noChanges: true, judge: { findings } } : { judge: { findings } },
    [...reused, told, evaluated],
  );
}
