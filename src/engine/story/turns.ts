/**
 * The turns of a story: a coder turn (committed, its usage priced), and the judge
 * and verifier calls, each on an executor the roster picks, with the tree held at
 * the commit they read. What follows a turn is decided by core/story.
 */
import { join } from 'node:path';
import type { z } from 'zod';
import type { ExecutorConfig } from '../../core/config/types.js';
import {
  buildJudgePrompt,
  buildVerifierPrompt,
  extractAnswer,
  judgeVerdictSchema,
  verifierAnswerSchema,
} from '../../core/judge/index.js';
import type { Story } from '../../core/model.js';
import { answerBlocked, buildCoderPrompt, type PromptFeedback } from '../../core/prompt/index.js';
import {
  decideAfterHelperExclusion,
  decideAfterHelperTurn,
  INTERRUPTED,
  startHelperCall,
  type BlockedClaim,
  type ExecutorSignal,
  type HelperFacts,
  type HelperRole,
  type JudgeFacts,
  type TurnFacts,
  type VerifierFacts,
} from '../../core/story/index.js';
import type { Exclusion } from '../../core/roster/index.js';
import { priceUsage } from '../../core/usage/index.js';
import type { EpicContext } from '../context.js';
import type { WorktreePort } from '../ports.js';
import { StoryStop } from '../stop.js';
import { mergeUsage } from '../usage.js';
import { guardGitConfig, holdAt } from './checks.js';
import { performEffects, type Recorder } from './recorder.js';

/** Waits before a retry, returning early (without throwing) when the run is interrupted. */
function backoff(ctx: EpicContext, ms: number): Promise<void> {
  return ctx.ports.clock.sleep(ms, ctx.interrupt.signal);
}

/** Turns of a story so far: coder, judge and verifier turns count alike. */
interface TurnCounter {
  round: number;
}

/** Where a story's turns run and are recorded. */
export interface TurnScope {
  readonly ctx: EpicContext;
  readonly story: Story;
  readonly tree: WorktreePort;
  readonly rec: Recorder;
  readonly turn: TurnCounter;
}

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

/** Tells the roster an executor stopped; its exclusion, or none (a rate limit below the threshold). */
export async function signalRoster(
  ctx: EpicContext,
  executor: string,
  signal: ExecutorSignal,
): Promise<Exclusion | null> {
  return signal.kind === 'missing-binary'
    ? ctx.roster.missingBinary(executor, signal.detail)
    : ctx.roster.signal(executor, signal.outcome, signal.resetAt, signal.detail);
}

/**
 * One judge or verifier call: picks an executor for the role away from the
 * story's coders when another can serve, records its usage under that executor,
 * puts back anything it changed, and reads its JSON answer. What follows each
 * turn (a repair re-ask, a retry, another executor, no answer) is `core/story`'s
 * decision. Returns the answer, or why there is none.
 */
async function askHelper<T>(
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
    /** The commit the helper looks at: the tree is held there (it only reads). */
    readonly head: string;
  },
): Promise<HelperResult<T>> {
  const { ctx, story, tree, rec, turn } = scope;
  const { role } = request;
  /** Runs one turn of the executor the roster picks. */
  const helperTurn = async (repairError: string | undefined): Promise<HelperFacts<T>> => {
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
    const pick = ctx.roster.helper(role, request.preferred, coders);
    if (pick === null) return { kind: 'no-executor' };
    const executor = pick.executor;
    ctx.emit(
      'story',
      `round ${turn.round}: ${executor.id} ${role === 'judge' ? 'judging' : 'verifying'}`,
      story.id,
    );
    const round = turn.round;
    const doing = `round ${round} (${executor.id} ${role === 'judge' ? 'judging' : 'verifying'})`;
    const result = await guardGitConfig(ctx, story, tree, rec, doing, () =>
      rec.time(role, () =>
        rec.logs.capture(role, (log) =>
          ctx.ports.executors(executor).runTurn(
            {
              epic: ctx.settings.epic,
              story: story.id,
              round,
              role,
              prompt: request.prompt(repairError),
              worktree: tree.path,
              executor,
              env: ctx.settings.executorEnv[executor.id] ?? {},
              // A home per role: what a coder left in its home never reaches a judge.
              home: join(ctx.settings.homesDir, story.id, role, executor.id),
              timeoutMs: ctx.config.timeouts.storyMs,
            },
            ctx.interrupt.signal,
            (l) => log.line(l),
          ),
        ),
      ),
    );
    turn.round += 1;
    await rec.save({
      usage: mergeUsage(rec.record.usage, priceUsage(result.usage, ctx.config.prices)),
    });
    // A judge or verifier only reads: whatever it committed or changed is put back.
    await holdAt(ctx, story, tree, rec, request.head, `the ${role} (${executor.id})`);
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
      outcome: result.outcome,
      missingBinary: result.missingBinary === true,
      detail: result.detail,
      resetAt: result.resetAt,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      capped: result.capped === true,
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

/** The judge's verdict on the branch as it is (an empty diff asks whether the work is in place). */
export async function judgeStory(
  scope: TurnScope,
  story: { readonly coders: readonly string[]; readonly transientRetries: number },
  base: string,
  empty: boolean,
): Promise<JudgeFacts> {
  const { ctx, tree } = scope;
  const head = await tree.head();
  const diff = empty ? '' : await ctx.ports.git.diff(base, head);
  const { answer, transientRetries } = await askHelper(
    scope,
    story.coders,
    story.transientRetries,
    {
      role: 'judge',
      head,
      preferred: ctx.config.judge?.executor,
      schema: judgeVerdictSchema,
      prompt: (repairError) =>
        buildJudgePrompt({
          epic: ctx.settings.epic,
          plan: ctx.settings.plan,
          story: scope.story,
          diff,
          houseRules: ctx.settings.houseRules,
          repairError,
          review: scope.rec.record.revision,
        }),
    },
  );
  if (typeof answer === 'string') return { kind: 'unavailable', why: answer, transientRetries };
  return {
    kind: 'verdict',
    verdict: answer.value,
    executor: answer.executor,
    independent: answer.independent,
    transientRetries,
  };
}

/** A verifier's answer on a BLOCKED_ON claim the plan cannot settle. */
export async function verifyClaim(
  scope: TurnScope,
  story: { readonly coders: readonly string[]; readonly transientRetries: number },
  claim: BlockedClaim,
): Promise<VerifierFacts> {
  const { ctx, tree } = scope;
  const { answer: verdict, transientRetries } = await askHelper(
    scope,
    story.coders,
    story.transientRetries,
    {
      role: 'verifier',
      head: await tree.head(),
      schema: verifierAnswerSchema,
      prompt: (repairError) =>
        buildVerifierPrompt({
          epic: ctx.settings.epic,
          plan: ctx.settings.plan,
          story: scope.story,
          claim: claim.claim,
          planAnswer: claim.answer,
          repairError,
        }),
    },
  );
  if (typeof verdict === 'string') return { kind: 'unavailable', why: verdict, transientRetries };
  return {
    kind: 'answer',
    executor: verdict.executor,
    real: verdict.value.real,
    reason: verdict.value.reason,
    transientRetries,
  };
}

/** A BLOCKED_ON claim with what the plan answers it. */
function blockedClaim(ctx: EpicContext, story: Story, claim: string): BlockedClaim {
  const answer = answerBlocked(ctx.settings.plan, story, claim);
  return {
    claim,
    answer: answer.answer,
    suggestedEdit: answer.suggestedEdit,
    decided: answer.decided,
  };
}

/** Waits `ms` (returning early when interrupted), then runs one coder turn and commits it. */
export async function coderTurn(
  scope: TurnScope,
  executor: ExecutorConfig,
  action: { readonly feedback: PromptFeedback | undefined; readonly waitMs: number },
): Promise<TurnFacts> {
  const { ctx, story, tree, rec, turn } = scope;
  if (action.waitMs > 0) await backoff(ctx, action.waitMs);
  if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
  const { feedback } = action;
  const prompt = buildCoderPrompt({
    epic: ctx.settings.epic,
    plan: ctx.settings.plan,
    story,
    round: turn.round,
    gates: ctx.config.gates,
    houseRules: ctx.settings.houseRules,
    ...(feedback === undefined ? {} : { feedback }),
    ...(rec.record.revision === undefined ? {} : { review: rec.record.revision }),
  });
  ctx.emit('story', `round ${turn.round}: ${executor.id} coding`, story.id);
  const started = rec.record.startedAt
    ? Date.parse(rec.record.startedAt)
    : ctx.ports.clock.now().getTime();
  const left = ctx.config.timeouts.storyMs - (ctx.ports.clock.now().getTime() - started);
  const round = turn.round;
  const doing = `round ${round} (${executor.id} coding)`;
  const result = await guardGitConfig(ctx, story, tree, rec, doing, () => {
    const log = rec.logs.open();
    const pending = ctx.ports.executors(executor).runTurn(
      {
        epic: ctx.settings.epic,
        story: story.id,
        round: turn.round,
        role: 'coder',
        prompt,
        worktree: tree.path,
        executor,
        env: ctx.settings.executorEnv[executor.id] ?? {},
        home: join(ctx.settings.homesDir, story.id, 'coder', executor.id),
        timeoutMs: Math.max(1000, left),
      },
      ctx.interrupt.signal,
      (l) => log.line(l),
    );
    ctx.checkpoint('mid-coder', story.id);
    return rec.time('code', async () => {
      try {
        return await pending;
      } finally {
        await rec.logs.save('coder', log);
      }
    });
  });
  // Every harness's usage is priced the same way: the CLI's own cost, else the price table.
  const priced = priceUsage(result.usage, ctx.config.prices);
  await rec.save({ usage: mergeUsage(rec.record.usage, priced) });
  const sha = await tree.commitAll(`${story.id}: round ${turn.round} by ${executor.id}`);
  if (sha !== null) {
    // The paid work is on the branch: a resume checks it before paying for another turn.
    await rec.save({ progress: { commit: sha, passed: 'none' } });
    ctx.checkpoint('after-commit', story.id);
  }
  turn.round += 1;
  return {
    interrupted: ctx.interrupt.signal.aborted,
    round,
    outcome: result.outcome,
    missingBinary: result.missingBinary === true,
    detail: result.detail,
    resetAt: result.resetAt,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    capped: result.capped === true,
    blocked:
      result.blockedOn === undefined ? undefined : blockedClaim(ctx, story, result.blockedOn),
  };
}
