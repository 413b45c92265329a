/**
 * What every CLI harness module provides: a pure invocation builder (argv,
 * env, stdin, files to write into the isolated home) and a pure parser of the
 * CLI's output into one parsed run.
 */
import type { OutcomeClass, TurnRequest } from '../executor.js';
import type { TokenCounts } from '../model.js';

export interface InvocationOptions {
  /** The binary to run (a name on PATH or an absolute path). */
  readonly binary: string;
  /** The model API base URL (a gateway, or a loopback test server). */
  readonly baseUrl?: string;
}

export interface Invocation {
  readonly argv: string[];
  /** The harness's own variables plus the executor env; the adapter adds the base env. */
  readonly env: Record<string, string>;
  readonly stdin?: string;
  /** Files to write before the run (absolute paths inside `request.home`). */
  readonly files?: { path: string; content: string }[];
}

/** Usage as one CLI reported it, per model. `model` null: the CLI did not say. */
export interface ParsedUsage {
  readonly model: string | null;
  readonly tokens: TokenCounts;
  /** US dollars, when the CLI reported a cost. */
  readonly costUsd: number | null;
}

export interface ParsedRun {
  readonly outcome: OutcomeClass;
  readonly finalMessage: string;
  /** Empty when the CLI reported no usage at all (then the adapter estimates). */
  readonly usage: readonly ParsedUsage[];
  /** For usage-limit: when the executor may be used again (ISO time), if the CLI said. */
  readonly resetAt?: string;
  /** The CLI's own error message for a non-ok outcome; '' when ok. */
  readonly detail: string;
  /** The agent stopped at its own turn or budget cap: its failure, not a crash. */
  readonly capped?: boolean;
}

/** What parsers need besides the output: the clock, for relative reset times. */
export interface ParseContext {
  readonly now: Date;
}

export type BuildInvocation = (request: TurnRequest, opts: InvocationOptions) => Invocation;
export type ParseOutput = (
  stdout: string,
  stderr: string,
  exitCode: number | null,
  context?: ParseContext,
) => ParsedRun;
