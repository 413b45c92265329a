/**
 * The judge and verifier calls of a story, each on an executor the roster picks (never
 * the story's coder when another can serve), each turn in a fresh checkout of the commit it
 * reads,
 * retried after a transient fault within the story's budget, and reused when a kept
 * answer's fingerprint matches what the call would read.
 */
import type { z } from 'zod';
import type { ExecutorConfig } from '../../core/config/types.js';
import {
  buildJudgePrompt,
  buildVerifierPrompt,
  extractAnswer,
  helperFingerprint,
  judgeVerdictSchema,
  keepAnswer,
  reusableAnswer,
  verifierAnswerSchema,
} from '../../core/judge/index.js';
import type { HelperAnswer as KeptAnswer } from '../../core/model.js';
import {
  decideAfterHelperExclusion,
  decideAfterHelperTurn,
  evidenceNotes,
  INTERRUPTED,
  startHelperCall,
  type BlockedClaim,
  type HelperFacts,
  type HelperRole,
  type JudgeFacts,
  type VerifierFacts,
} from '../../core/story/index.js';
import { priceUsage } from '../../core/usage/index.js';
import { strayPaths } from '../../core/perimeter/index.js';
import type { EpicContext } from '../context.js';
import type { WorktreePort } from '../ports.js';
import { StoryStop } from '../stop.js';
import { mergeUsage } from '../usage.js';
import { noteOn, perimeterOf } from './checks.js';
import { fromCommit } from '../checkout.js';
import { performEffects } from './recorder.js';
import type { TraceAttributes } from '../trace.js';
import { startTurn, turnEnd } from '../turn-request.js';
import { backoff, signalRoster, turnAttributes, type TurnScope } from './turns.js';

interface HelperAnswer<T> {
  readonly value: T;
  readonly executor: string;
  /** False when the helper is also one of the story's coders. */
  readonly independent: boolean;
}

/** A helper call's answer (or why there is none), and the story's transient retries after it. */
interface HelperResult<T> {
  readonly answer: HelperAnswer<T> | string;
  readonly transientRetries: number;
}

/**
 * One judge or verifier call: picks an executor for the role away from the
 * story's coders when another can serve, records its usage under that executor,
 * puts back anything it changed, and reads its JSON answer. What follows each
 * turn (a repair re-ask, a retry, another executor, no answer) is `core/story`'s
 * decision. Returns the answer, or why there is none.
 */
export async function askHelper<T>(
  scope: TurnScope,
  /** The story's coders, whom the helper avoids when another can serve. */
  coders: readonly string[],
  /** The story's transient retries so far. */
  transientRetries: number,
  request: {
    readonly role: HelperRole;
    readonly preferred?: string | undefined;
    readonly prompt: (repairError: string | undefined) => string;
    readonly schema: z.ZodType<T>;
    /** The commit the helper reads: each turn runs in a fresh checkout of it. */
    readonly head: string;
    /** epicflow's own change to that checkout before the turn (paths put back as on the base). */
    readonly prepare?: ((tree: WorktreePort) => Promise<void>) | undefined;
    /** What the turn's span says besides the turn: an evaluator's kind, and its scores. */
    readonly evaluator?: {
      readonly attributes: TraceAttributes;
      readonly scores: (answer: T) => TraceAttributes;
    };
    /** What people read while it runs: `judging`, `reviewing (tests)`. */
    readonly doing?: string;
  },
): Promise<HelperResult<T>> {
  const { ctx, story, rec, turn } = scope;
  const { role } = request;
  /** Runs one turn of the executor the roster picks. */
  const helperTurn = async (repairError: string | undefined): Promise<HelperFacts<T>> => {
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
    const pick = ctx.roster.helper(role, request.preferred, coders);
    if (pick === null) return { kind: 'no-executor' };
    const executor = pick.executor;
    const what = request.doing ?? (role === 'judge' ? 'judging' : 'verifying');
    ctx.emit('story', `round ${turn.round}: ${executor.id} ${what}`, story.id);
    const round = turn.round;
    const doing = `round ${round} (${executor.id} ${what})`;
    const { evaluator } = request;
    // An evaluator's span carries its verdict's scores, read from the answer as it ends.
    const evaluated = (r: Parameters<typeof turnAttributes>[0]): TraceAttributes => {
      if (evaluator === undefined) return turnAttributes(r);
      const answer = r.outcome === 'ok' ? extractAnswer(r.finalMessage, request.schema) : null;
      return {
        ...turnAttributes(r),
        ...(answer !== null && answer.ok ? evaluator.scores(answer.value) : {}),
      };
    };
    // A fresh checkout of the commit per turn: nothing the coder left outside it, nothing
    // an earlier turn left; whatever this one commits or changes there goes with it.
    const reading = <R>(work: (tree: WorktreePort) => Promise<R>): Promise<R> =>
      fromCommit(
        ctx,
        {
          sha: request.head,
          name: `${story.id}.${role}`,
          during: doing,
          committer: `the ${role} (${executor.id})`,
          note: noteOn(ctx, story, rec),
          prepare: request.prepare,
        },
        work,
      );
    const result = await reading((tree) =>
      rec.time(
        role,
        () =>
          rec.logs.capture(role, (log) =>
            startTurn(
              ctx,
              executor,
              {
                story: story.id,
                round,
                role,
                prompt: request.prompt(repairError),
                worktree: tree.path,
                timeoutMs: ctx.config.timeouts.storyMs,
              },
              log,
            ),
          ),
        {
          'epicflow.round': round,
          'epicflow.executor': executor.id,
          ...(evaluator?.attributes ?? {}),
        },
        evaluated,
      ),
    );
    turn.round += 1;
    await rec.save({
      usage: mergeUsage(rec.record.usage, priceUsage(result.usage, ctx.config.prices)),
    });
    const interrupted = ctx.interrupt.signal.aborted;
    if (result.outcome === 'ok') {
      return {
        kind: 'answered',
        executor: executor.id,
        independent: pick.independent,
        interrupted,
        answer: extractAnswer(result.finalMessage, request.schema),
      };
    }
    return {
      kind: 'stopped',
      executor: executor.id,
      round,
      interrupted,
      ...turnEnd(result),
      outcome: result.outcome,
    };
  };

  let decision = startHelperCall<T>(role, {
    retries: ctx.config.retries,
    transientRetries,
  });
  for (;;) {
    await performEffects(ctx, story, rec, decision.effects);
    if (decision.waitMs > 0) await backoff(ctx, decision.waitMs);
    const { call, next } = decision;
    switch (next.kind) {
      case 'answer':
        return {
          answer: { value: next.value, executor: next.executor, independent: next.independent },
          transientRetries: call.transientRetries,
        };
      case 'unavailable':
        return { answer: next.why, transientRetries: call.transientRetries };
      case 'stop':
        throw new StoryStop(next.status, next.reason);
      case 'ask':
        decision = decideAfterHelperTurn(call, await helperTurn(next.repairError));
        break;
      case 'exclude': {
        const exclusion = await signalRoster(ctx, next.executor, next.signal);
        decision = decideAfterHelperExclusion(call, { exclusion: exclusion?.reason ?? null });
        break;
      }
    }
  }
}

/**
 * What a judge or verifier call reads, as its fingerprint: given the executor that
 * answers (or would), the sha256 of its prompt, its subject and that executor.
 */
export type FingerprintOf = (executor: ExecutorConfig) => string;

/**
 * The answer a run before kept for this call: for the first call of the role in this
 * run, when the executor the roster would pick now reads what the kept answer read.
 */
function keptAnswer<T>(
  scope: TurnScope,
  role: HelperRole,
  kept: KeptAnswer<T> | undefined,
  preferred: string | undefined,
  coders: readonly string[],
  fingerprintOf: FingerprintOf,
): { readonly kept: KeptAnswer<T>; readonly independent: boolean } | undefined {
  const { ctx, turn } = scope;
  const first = role === 'judge' ? turn.judged !== true : turn.verified !== true;
  if (role === 'judge') turn.judged = true;
  else turn.verified = true;
  const pick = ctx.roster.helper(role, preferred, coders);
  if (pick === null) return undefined;
  const reused = reusableAnswer(ctx.settings.answerKey, kept, fingerprintOf(pick.executor), first);
  return reused === undefined ? undefined : { kept: reused, independent: pick.independent };
}

/** The answer kept in the record, sealed over the fingerprint of what the executor that gave it read. */
export function keep<T>(
  ctx: EpicContext,
  answer: { readonly executor: string; readonly value: T },
  fingerprintOf: FingerprintOf,
): KeptAnswer<T> | undefined {
  const executor = ctx.config.executors.find((e) => e.id === answer.executor);
  if (executor === undefined) return undefined;
  return keepAnswer(ctx.settings.answerKey, fingerprintOf(executor), answer.executor, answer.value);
}

/**
 * The judge's verdict on the branch as it is (an empty diff asks whether the work is in
 * place): the one a run before kept, when this is the run's first judge call and nothing
 * it reads changed; else the judge's answer now, kept for the next run.
 */
export async function judgeStory(
  scope: TurnScope,
  story: { readonly coders: readonly string[]; readonly transientRetries: number },
  base: string,
  empty: boolean,
  openReview?: readonly string[],
): Promise<JudgeFacts> {
  const { ctx, tree, rec } = scope;
  const head = await tree.head();
  const diff = empty ? '' : await ctx.ports.git.diff(base, head);
  const prompt = (repairError: string | undefined): string =>
    buildJudgePrompt({
      epic: ctx.settings.epic,
      plan: ctx.settings.plan,
      story: scope.story,
      diff,
      houseRules: ctx.settings.houseRules,
      repairError,
      review: scope.rec.record.revision,
      evidence: evidenceNotes(scope.rec.record.notes),
      deferNonBlocking: ctx.config.judge?.deferNonBlocking === true,
      followUp: scope.rec.record.deferredRound?.findings,
      openReview,
    });
  const fingerprintOf: FingerprintOf = (executor) =>
    helperFingerprint({
      role: 'judge',
      prompt: prompt(undefined),
      // The prompt holds the diff capped; with no diff, the judge inspects the tree.
      subject: empty ? `no changes, at ${head}` : diff,
      executor,
    });
  const preferred = ctx.config.judge?.executor;
  const reused = keptAnswer(
    scope,
    'judge',
    rec.record.judged,
    preferred,
    story.coders,
    fingerprintOf,
  );
  if (reused !== undefined) {
    return {
      kind: 'verdict',
      verdict: reused.kept.answer,
      executor: reused.kept.executor,
      independent: reused.independent,
      reused: true,
    };
  }
  const { answer, transientRetries } = await askHelper(
    scope,
    story.coders,
    story.transientRetries,
    {
      role: 'judge',
      head,
      preferred,
      schema: judgeVerdictSchema,
      prompt,
      evaluator: {
        attributes: { 'epicflow.evaluator.kind': 'judge', 'openinference.span.kind': 'EVALUATOR' },
        scores: (v) => ({
          'epicflow.judge.cleared': v.cleared,
          'epicflow.judge.findings': v.findings.length,
          ...Object.fromEntries(
            Object.entries(v.scores).map(([d, n]) => [`epicflow.judge.score.${d}`, n]),
          ),
        }),
      },
    },
  );
  if (typeof answer === 'string') return { kind: 'unavailable', why: answer, transientRetries };
  const judged = keep(ctx, answer, fingerprintOf);
  if (judged !== undefined) await rec.save({ judged });
  return {
    kind: 'verdict',
    verdict: answer.value,
    executor: answer.executor,
    independent: answer.independent,
    transientRetries,
  };
}

/**
 * What a verifier's checkout needs before it reads: every path of the story commit outside
 * its perimeter put back as on the base, as a commit of that checkout (the story's branch is
 * left as it is: the checks judge it later). A verifier runs right after a coder turn, before
 * any check: what the coder left outside its perimeter (a CLI's project settings, a plugin,
 * an instructions file) never reaches it. Undefined when the commit keeps to its perimeter.
 */
async function withinPerimeter(
  scope: TurnScope,
  base: string,
  head: string,
): Promise<((tree: WorktreePort) => Promise<void>) | undefined> {
  const { ctx, story, tree } = scope;
  const strays = strayPaths((await perimeterOf(ctx, story, tree, base, head)).perimeter);
  if (strays.length === 0) return undefined;
  return async (checkout) => {
    await checkout.restorePaths(base, strays);
    await checkout.commitAll(`${story.id}: what the verifier reads, within the perimeter`);
    ctx.emit(
      'story',
      `the verifier reads the story without ${strays.join(', ')} (outside its perimeter)`,
      story.id,
    );
  };
}

/**
 * A verifier's answer on a BLOCKED_ON claim the plan cannot settle: kept and reused
 * like the judge's verdict (the same claim on the same commit).
 */
export async function verifyClaim(
  scope: TurnScope,
  story: { readonly coders: readonly string[]; readonly transientRetries: number },
  claim: BlockedClaim,
  base: string,
): Promise<VerifierFacts> {
  const { ctx, tree, rec } = scope;
  const head = await tree.head();
  const prompt = (repairError: string | undefined): string =>
    buildVerifierPrompt({
      epic: ctx.settings.epic,
      plan: ctx.settings.plan,
      story: scope.story,
      claim: claim.claim,
      planAnswer: claim.answer,
      repairError,
    });
  const fingerprintOf: FingerprintOf = (executor) =>
    helperFingerprint({ role: 'verifier', prompt: prompt(undefined), subject: head, executor });
  const reused = keptAnswer(
    scope,
    'verifier',
    rec.record.verified,
    undefined,
    story.coders,
    fingerprintOf,
  );
  if (reused !== undefined) {
    return {
      kind: 'answer',
      executor: reused.kept.executor,
      real: reused.kept.answer.real,
      reason: reused.kept.answer.reason,
      reused: true,
    };
  }
  const { answer: verdict, transientRetries } = await askHelper(
    scope,
    story.coders,
    story.transientRetries,
    {
      role: 'verifier',
      head,
      prepare: await withinPerimeter(scope, base, head),
      schema: verifierAnswerSchema,
      prompt,
    },
  );
  if (typeof verdict === 'string') return { kind: 'unavailable', why: verdict, transientRetries };
  const verified = keep(ctx, verdict, fingerprintOf);
  if (verified !== undefined) await rec.save({ verified });
  return {
    kind: 'answer',
    executor: verdict.executor,
    real: verdict.value.real,
    reason: verdict.value.reason,
    transientRetries,
  };
}
