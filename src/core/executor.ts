/**
 * The executor port: one coder/judge/verifier turn of one executor in one
 * worktree. Harness adapters (command, codex, claude, gemini, opencode, aider)
 * implement it; the engine and roster only see this.
 */
import type { ExecutorConfig } from './config/types.js';
import type { UsageEntry } from './model.js';

/** How a turn ended, decided from the event stream first, text second, exit code last. */
export type OutcomeClass = 'ok' | 'usage-limit' | 'rate-limited' | 'outage' | 'auth' | 'failed';

export interface TurnRequest {
  readonly epic: string;
  readonly story: string;
  /** 1 for the first coder turn, then 2, 3, … for fix and judge rounds (a planner: its repair round). */
  readonly round: number;
  readonly role: 'coder' | 'judge' | 'verifier' | 'planner' | 'reviewer';
  readonly prompt: string;
  /** Absolute path of the story worktree (the process's working directory). */
  readonly worktree: string;
  readonly executor: ExecutorConfig;
  /** Resolved executor environment (secrets from `${VAR}`), never a GitHub token. */
  readonly env: Readonly<Record<string, string>>;
  /** An isolated home/config directory for this executor. */
  readonly home: string;
  readonly timeoutMs: number;
  /** A turn that prints nothing for this long is stopped as stalled (absent: never). */
  readonly silenceMs?: number | undefined;
}

/** Why a turn was stopped before it ended by itself: it was going nowhere. */
export interface Stall {
  /**
   * `repeat`: the same tool call again and again; `silence`: no output at all (both seen
   * while the turn runs); `no-progress`: a fix round that changed nothing (seen after it).
   */
  readonly signal: 'repeat' | 'silence' | 'no-progress';
  /** For people: `the same tool call 5 times in a row: Bash {"command":"npm test"}`. */
  readonly detail: string;
}

export interface RunRecord {
  readonly outcome: OutcomeClass;
  /** The agent's final message (for judge verdicts and BLOCKED_ON). */
  readonly finalMessage: string;
  readonly usage: readonly UsageEntry[];
  /** For usage-limit: when the executor may be used again (ISO time), if the CLI said. */
  readonly resetAt?: string;
  /** Set when the last non-empty line was `BLOCKED_ON: <need>`. */
  readonly blockedOn?: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** The harness's binary is not installed: the roster excludes the executor for the run. */
  readonly missingBinary?: boolean;
  /**
   * The agent stopped at its own turn or budget cap (a `failed` outcome): the work's
   * failure, never a crash of the CLI to retry.
   */
  readonly capped?: boolean;
  /** epicflow stopped the turn as stalled (a `failed` outcome): the work's failure, not a crash. */
  readonly stalled?: Stall;
  /**
   * The shell commands the turn ran, from the CLI's own event stream; absent when the
   * executor's output cannot show them (a `command` agent, aider).
   */
  readonly commandsRun?: readonly string[];
  /** A short human reason for a non-ok outcome (capped tail of the output). */
  readonly detail: string;
  readonly durationMs: number;
}

export interface ExecutorPort {
  /** `onLine`: every line the executor prints (both streams), as it prints it: the turn's transcript. */
  runTurn(
    request: TurnRequest,
    signal?: AbortSignal,
    onLine?: (line: string) => void,
  ): Promise<RunRecord>;
}
