/**
 * One executor turn inside an epic run: its request (the epic, the executor's resolved
 * environment, its home and the silence limit come from the run's settings; the caller
 * gives what differs per turn), its start, and how it ended as the story's rules read it.
 */
import { join } from 'node:path';
import type { ExecutorConfig } from '../core/config/types.js';
import type { RunRecord, TurnRequest } from '../core/executor.js';
import type { TurnEnd } from '../core/story/index.js';
import type { EpicContext } from './context.js';

/** What differs between turns. */
interface TurnSpec {
  /** The story (or job) the turn works for. */
  readonly story: string;
  readonly round: number;
  readonly role: TurnRequest['role'];
  readonly prompt: string;
  readonly worktree: string;
  readonly timeoutMs: number;
}

/** What a turn takes from what it is part of: a run's settings, a planning or retro request. */
interface TurnOwner {
  readonly epic: string;
  /** Resolved environment per executor id. */
  readonly executorEnv: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** A turn printing nothing this long is stopped as stalled. */
  readonly silenceMs: number | undefined;
}

/** The one builder of an executor turn's request (story turns, the land resolver, planners, retros). */
export function buildTurnRequest(
  owner: TurnOwner,
  executor: ExecutorConfig,
  turn: TurnSpec & { readonly home: string },
): TurnRequest {
  return {
    epic: owner.epic,
    story: turn.story,
    round: turn.round,
    role: turn.role,
    prompt: turn.prompt,
    worktree: turn.worktree,
    executor,
    env: owner.executorEnv[executor.id] ?? {},
    home: turn.home,
    timeoutMs: turn.timeoutMs,
    silenceMs: owner.silenceMs,
  };
}

/** A turn of a run: its owner is the run's settings. */
export function turnRequest(
  ctx: EpicContext,
  executor: ExecutorConfig,
  turn: TurnSpec & { readonly home?: string },
): TurnRequest {
  return buildTurnRequest(
    {
      epic: ctx.settings.epic,
      executorEnv: ctx.settings.executorEnv,
      silenceMs: ctx.config.timeouts.silenceMs,
    },
    executor,
    {
      ...turn,
      // A home per story, role and executor: what a coder left in its home never reaches a judge.
      home: turn.home ?? join(ctx.settings.homesDir, turn.story, turn.role, executor.id),
    },
  );
}

/** What is left of a story's wall-clock limit, counted from its start (at least a second). */
export function storyTimeLeft(ctx: EpicContext, startedAt: string | undefined): number {
  const now = ctx.ports.clock.now().getTime();
  const started = startedAt ? Date.parse(startedAt) : now;
  return Math.max(1000, ctx.config.timeouts.storyMs - (now - started));
}

/** Starts the turn, interruptible by the run, each line it prints into `log`. */
export function startTurn(
  ctx: EpicContext,
  executor: ExecutorConfig,
  turn: TurnSpec & { readonly home?: string },
  log: { line(text: string): void },
): Promise<RunRecord> {
  return ctx.ports
    .executors(executor)
    .runTurn(turnRequest(ctx, executor, turn), ctx.interrupt.signal, (l) => log.line(l));
}

/** How a turn ended, for the story's rules (retry, roster, failure). */
export function turnEnd(result: RunRecord): TurnEnd & { readonly resetAt: string | undefined } {
  return {
    outcome: result.outcome,
    missingBinary: result.missingBinary === true,
    detail: result.detail,
    resetAt: result.resetAt,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    capped: result.capped === true,
    stalled: result.stalled,
  };
}
