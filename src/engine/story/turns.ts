/**
 * The turns of a story: a coder turn (committed, its usage priced), and the judge
 * and verifier calls, each on an executor the roster picks, with the tree held at
 * the commit they read. What follows a turn is decided by core/story.
 */
import { join } from 'node:path';
import type { z } from 'zod';
import type { ExecutorConfig } from '../../core/config/types.js';
import type { RunRecord } from '../../core/executor.js';
import {
  buildJudgePrompt,
  buildVerifierPrompt,
  extractAnswer,
  helperFingerprint,
  judgeVerdictSchema,
  reusableAnswer,
  verifierAnswerSchema,
} from '../../core/judge/index.js';
import { totalTokens, type HelperAnswer as KeptAnswer, type Story } from '../../core/model.js';
import {
  answerBlocked,
  buildCoderPrompt,
  describeStartingCode,
  startingCodeSection,
  type PromptFeedback,
  type StartingCode,
} from '../../core/prompt/index.js';
import {
  checkClaims,
  decideAfterHelperExclusion,
  decideAfterHelperTurn,
  evidenceNotes,
  INTERRUPTED,
  parseClaims,
  parseFindings,
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
import type { TraceAttributes } from '../trace.js';
import { mergeUsage } from '../usage.js';
import { guardGitConfig, holdAt } from './checks.js';
import { performEffects, type Recorder } from './recorder.js';
import { readStartingCode } from './starting-code.js';

/** What a turn's span says of how it ended and what it used. */
export function turnAttributes(r: RunRecord): TraceAttributes {
  const tokens = r.usage.reduce((sum, u) => sum + totalTokens(u.tokens), 0);
  const cost = r.usage.reduce((sum, u) => sum + (u.costUsd ?? 0), 0);
  return {
    'epicflow.outcome': r.outcome,
    'epicflow.tokens': tokens,
    ...(r.usage.some((u) => u.costUsd !== null) ? { 'epicflow.cost_usd': cost } : {}),
    ...(r.stalled === undefined ? {} : { 'epicflow.stalled': r.stalled.signal }),
  };
}

/** Waits before a retry, returning early (without throwing) when the run is interrupted. */
function backoff(ctx: EpicContext, ms: number): Promise<void> {
  return ctx.ports.clock.sleep(ms, ctx.interrupt.signal);
}

/** Turns of a story so far: coder, judge and verifier turns count alike. */
export interface TurnCounter {
  round: number;
  /** The code the story started from in this run, read before its first coder turn. */
  starting?: StartingCode;
  /** A judge (verifier) call came in this run: later ones never reuse a kept answer. */
  judged?: boolean;
  verified?: boolean;
}

/** Where a story's turns run and are recorded. */
export interface TurnScope {
  readonly ctx: EpicContext;
  readonly story: Story;
  readonly tree: WorktreePort;
  readonly rec: Recorder;
  readonly turn: TurnCounter;
  /** The task these rounds run (a task plan): its prompt section, and its findings once it answered. */
  readonly task?: TaskTurn;
}

/** The task of a coder turn: shown in its prompt; the "Findings" it ended with are kept. */
export interface TaskTurn {
  readonly section: readonly string[];
  findings?: string;
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
      rec.time(
        role,
        () =>
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
                silenceMs: ctx.config.timeouts.silenceMs,
              },
              ctx.interrupt.signal,
              (l) => log.line(l),
            ),
          ),
        { 'epicflow.round': round, 'epicflow.executor': executor.id },
        turnAttributes,
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
      stalled: result.stalled,
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
type FingerprintOf = (executor: ExecutorConfig) => string;

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
  const reused = reusableAnswer(kept, fingerprintOf(pick.executor), first);
  return reused === undefined ? undefined : { kept: reused, independent: pick.independent };
}

/** The answer kept in the record with the fingerprint of what the executor that gave it read. */
function keep<T>(
  ctx: EpicContext,
  answer: { readonly executor: string; readonly value: T },
  fingerprintOf: FingerprintOf,
): KeptAnswer<T> | undefined {
  const executor = ctx.config.executors.find((e) => e.id === answer.executor);
  if (executor === undefined) return undefined;
  return { fingerprint: fingerprintOf(executor), executor: answer.executor, answer: answer.value };
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
    { role: 'judge', head, preferred, schema: judgeVerdictSchema, prompt },
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
 * A verifier's answer on a BLOCKED_ON claim the plan cannot settle: kept and reused
 * like the judge's verdict (the same claim on the same commit).
 */
export async function verifyClaim(
  scope: TurnScope,
  story: { readonly coders: readonly string[]; readonly transientRetries: number },
  claim: BlockedClaim,
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
    { role: 'verifier', head, schema: verifierAnswerSchema, prompt },
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

/**
 * "The code you start from", read at the branch head before the run's first coder turn,
 * and shown to every coder turn while the branch is still there (a turn retried after a
 * rate limit, a takeover before anything was committed); once a turn committed, the
 * files it shows are no longer the tree's, and it is left out.
 */
async function startingCodeNow(scope: TurnScope): Promise<StartingCode | undefined> {
  const { ctx, story, tree, turn } = scope;
  const head = await tree.head();
  if (turn.starting === undefined) {
    turn.starting = await readStartingCode(ctx, story, head);
    if (startingCodeSection(turn.starting).length > 0) {
      ctx.emit('story', describeStartingCode(turn.starting), story.id);
    }
  }
  return turn.starting.commit === head ? turn.starting : undefined;
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
  const startingCode = await startingCodeNow(scope);
  const prompt = buildCoderPrompt({
    epic: ctx.settings.epic,
    plan: ctx.settings.plan,
    story,
    round: turn.round,
    gates: ctx.config.gates,
    houseRules: ctx.settings.houseRules,
    ...(feedback === undefined ? {} : { feedback }),
    ...(rec.record.revision === undefined ? {} : { review: rec.record.revision }),
    ...(rec.record.retroNote === undefined ? {} : { retroNote: rec.record.retroNote }),
    ...(startingCode === undefined ? {} : { startingCode }),
    ...(scope.task === undefined ? {} : { tasks: scope.task.section }),
    ...(rec.record.deferredRound === undefined
      ? {}
      : { followUp: rec.record.deferredRound.findings }),
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
        silenceMs: ctx.config.timeouts.silenceMs,
      },
      ctx.interrupt.signal,
      (l) => log.line(l),
    );
    ctx.checkpoint('mid-coder', story.id);
    return rec.time(
      'code',
      async () => {
        try {
          return await pending;
        } finally {
          await rec.logs.save('coder', log);
        }
      },
      { 'epicflow.round': round, 'epicflow.executor': executor.id },
      turnAttributes,
    );
  });
  // Every harness's usage is priced the same way: the CLI's own cost, else the price table.
  const priced = priceUsage(result.usage, ctx.config.prices);
  await rec.save({ usage: mergeUsage(rec.record.usage, priced) });
  // What it says it verified, against the commands its own event stream shows it ran.
  const evidence =
    result.outcome === 'ok'
      ? checkClaims(parseClaims(result.finalMessage), result.commandsRun, {
          round,
          executor: executor.id,
        })
      : [];
  if (evidence.length > 0) {
    await rec.save({ notes: [...rec.record.notes, ...evidence] });
    for (const note of evidence) ctx.emit('story', `warning: ${note}`, story.id);
  }
  if (scope.task !== undefined && result.outcome === 'ok') {
    const findings = parseFindings(result.finalMessage);
    if (findings !== undefined) scope.task.findings = findings;
  }
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
    stalled: result.stalled,
    unchanged: sha === null,
    blocked:
      result.blockedOn === undefined ? undefined : blockedClaim(ctx, story, result.blockedOn),
  };
}
