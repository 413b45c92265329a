/**
 * The turns of a story: a coder turn (committed, its usage priced), and the judge
 * and verifier calls, each on an executor the roster picks, with the tree held at
 * the commit they read. What follows a turn is decided by core/story.
 */
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
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
  INTERRUPTED,
  RATE_LIMIT_BACKOFF_MS,
  shortDetail,
  type BlockedClaim,
  type JudgeFacts,
  type TurnFacts,
  type VerifierFacts,
} from '../../core/story/index.js';
import { priceUsage } from '../../core/usage/index.js';
import type { EpicContext } from '../context.js';
import type { WorktreePort } from '../ports.js';
import { StoryStop } from '../stop.js';
import { mergeUsage } from '../usage.js';
import { guardGitConfig, holdAt } from './checks.js';
import type { Recorder } from './recorder.js';

/** A judge or verifier call moves to another executor at most this many times. */
const HELPER_ATTEMPTS = 3;

/** Sleeps, returning early (without throwing) when the run is interrupted. */
async function backoff(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch {
    // Interrupted: the caller checks the signal next.
  }
}

/** Turns of a story so far: coder, judge and verifier turns count alike. */
export interface TurnCounter {
  round: number;
}

interface HelperAnswer<T> {
  readonly value: T;
  readonly executor: string;
  /** False when the helper is also one of the story's coders. */
  readonly independent: boolean;
}

/**
 * One judge or verifier call: picks an executor for the role away from the
 * story's coders when another can serve, records its usage under that executor,
 * puts back anything it changed, and reads its JSON answer (one repair re-ask
 * when the answer does not fit the schema). Infrastructure signals exclude the
 * executor and move the call to another one. Returns the answer, or why there is none.
 */
async function askHelper<T>(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  /** The story's coders, whom the helper avoids when another can serve. */
  coders: readonly string[],
  request: {
    readonly role: 'judge' | 'verifier';
    readonly preferred?: string | undefined;
    readonly prompt: (repairError: string | undefined) => string;
    readonly schema: z.ZodType<T>;
    /** The commit the helper looks at: the tree is held there (it only reads). */
    readonly head: string;
  },
): Promise<HelperAnswer<T> | string> {
  const { role } = request;
  let repairError: string | undefined;
  let why = `no executor can take the ${role} role`;
  for (let attempt = 0; attempt < HELPER_ATTEMPTS;) {
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
    const pick = ctx.roster.helper(role, request.preferred, coders);
    if (pick === null) return why;
    const executor = pick.executor;
    ctx.emit(
      'story',
      `round ${turn.round}: ${executor.id} ${role === 'judge' ? 'judging' : 'verifying'}`,
      story.id,
    );
    const doing = `round ${turn.round} (${executor.id} ${role === 'judge' ? 'judging' : 'verifying'})`;
    const result = await guardGitConfig(ctx, story, tree, rec, doing, () =>
      rec.time(role, () =>
        ctx.ports.executors(executor).runTurn(
          {
            epic: ctx.settings.epic,
            story: story.id,
            round: turn.round,
            role,
            prompt: request.prompt(repairError),
            worktree: tree.path,
            executor,
            env: ctx.settings.executorEnv[executor.id] ?? {},
            home: join(ctx.settings.homesDir, story.id, executor.id),
            timeoutMs: ctx.config.timeouts.storyMs,
          },
          ctx.interrupt.signal,
        ),
      ),
    );
    turn.round += 1;
    await rec.save({
      usage: mergeUsage(rec.record.usage, priceUsage(result.usage, ctx.config.prices)),
    });
    // A judge or verifier only reads: whatever it committed or changed is put back.
    await holdAt(ctx, story, tree, rec, request.head, `the ${role} (${executor.id})`);
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
    if (result.outcome === 'ok') {
      const answer = extractAnswer(result.finalMessage, request.schema);
      if (answer.ok)
        return { value: answer.value, executor: executor.id, independent: pick.independent };
      if (repairError !== undefined) return `${executor.id} gave no valid answer: ${answer.error}`;
      repairError = answer.error;
      ctx.emit(
        'story',
        `${role} answer of ${executor.id} unreadable (${answer.error}); asking once more`,
        story.id,
      );
      continue;
    }
    attempt += 1;
    if (result.missingBinary === true) {
      await ctx.roster.missingBinary(executor.id, result.detail);
      why = `${executor.id}: ${shortDetail(result.detail)}`;
      continue;
    }
    if (result.outcome === 'failed') return `${executor.id} failed: ${shortDetail(result.detail)}`;
    const exclusion = await ctx.roster.signal(
      executor.id,
      result.outcome,
      result.resetAt,
      result.detail,
    );
    why = `${executor.id} stopped: ${exclusion?.reason ?? result.outcome}`;
    if (exclusion === null) await backoff(RATE_LIMIT_BACKOFF_MS * attempt, ctx.interrupt.signal);
  }
  return why;
}

/** The judge's verdict on the branch as it is (an empty diff asks whether the work is in place). */
export async function judgeStory(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  coders: readonly string[],
  base: string,
  empty: boolean,
): Promise<JudgeFacts> {
  const head = await tree.head();
  const diff = empty ? '' : await ctx.ports.git.diff(base, head);
  const answer = await askHelper(ctx, story, tree, rec, turn, coders, {
    role: 'judge',
    head,
    preferred: ctx.config.judge?.executor,
    schema: judgeVerdictSchema,
    prompt: (repairError) =>
      buildJudgePrompt({
        epic: ctx.settings.epic,
        plan: ctx.settings.plan,
        story,
        diff,
        houseRules: ctx.settings.houseRules,
        repairError,
      }),
  });
  if (typeof answer === 'string') return { kind: 'unavailable', why: answer };
  return {
    kind: 'verdict',
    verdict: answer.value,
    executor: answer.executor,
    independent: answer.independent,
  };
}

/** A verifier's answer on a BLOCKED_ON claim the plan cannot settle. */
export async function verifyClaim(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  coders: readonly string[],
  claim: BlockedClaim,
): Promise<VerifierFacts> {
  const verdict = await askHelper(ctx, story, tree, rec, turn, coders, {
    role: 'verifier',
    head: await tree.head(),
    schema: verifierAnswerSchema,
    prompt: (repairError) =>
      buildVerifierPrompt({
        epic: ctx.settings.epic,
        plan: ctx.settings.plan,
        story,
        claim: claim.claim,
        planAnswer: claim.answer,
        repairError,
      }),
  });
  if (typeof verdict === 'string') return { kind: 'unavailable', why: verdict };
  return {
    kind: 'answer',
    executor: verdict.executor,
    real: verdict.value.real,
    reason: verdict.value.reason,
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
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  executor: ExecutorConfig,
  action: { readonly feedback: PromptFeedback | undefined; readonly waitMs: number },
): Promise<TurnFacts> {
  if (action.waitMs > 0) await backoff(action.waitMs, ctx.interrupt.signal);
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
  });
  ctx.emit('story', `round ${turn.round}: ${executor.id} coding`, story.id);
  const started = rec.record.startedAt
    ? Date.parse(rec.record.startedAt)
    : ctx.ports.clock.now().getTime();
  const left = ctx.config.timeouts.storyMs - (ctx.ports.clock.now().getTime() - started);
  const doing = `round ${turn.round} (${executor.id} coding)`;
  const result = await guardGitConfig(ctx, story, tree, rec, doing, () => {
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
        home: join(ctx.settings.homesDir, story.id, executor.id),
        timeoutMs: Math.max(1000, left),
      },
      ctx.interrupt.signal,
    );
    ctx.checkpoint('mid-coder', story.id);
    return rec.time('code', () => pending);
  });
  // Every harness's usage is priced the same way: the CLI's own cost, else the price table.
  const priced = priceUsage(result.usage, ctx.config.prices);
  await rec.save({ usage: mergeUsage(rec.record.usage, priced) });
  const sha = await tree.commitAll(`${story.id}: round ${turn.round} by ${executor.id}`);
  if (sha !== null) ctx.checkpoint('after-commit', story.id);
  turn.round += 1;
  return {
    interrupted: ctx.interrupt.signal.aborted,
    outcome: result.outcome,
    missingBinary: result.missingBinary === true,
    detail: result.detail,
    resetAt: result.resetAt,
    blocked:
      result.blockedOn === undefined ? undefined : blockedClaim(ctx, story, result.blockedOn),
  };
}
