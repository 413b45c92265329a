/**
 * From a parsed CLI run and the process facts to the run record the engine
 * sees: timeouts and cancels, usage entries (measured, else estimated), cost,
 * and the BLOCKED_ON claim.
 */
import type { ModelPrice } from '../config/types.js';
import type { OutcomeClass, RunRecord, TurnRequest } from '../executor.js';
import { totalTokens } from '../model.js';
import type { UsageEntry } from '../model.js';
import { estimateUsage, priceUsage } from '../usage/index.js';
import { tail } from './signals.js';
import type { ParsedRun } from './types.js';

interface ProcessFacts {
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly durationMs: number;
}

/** A run record plus what the roster needs to tell "cannot run here" apart. */
export interface CliRunRecord extends RunRecord {
  /** The CLI binary was not found: the executor is unusable until it is installed. */
  readonly missingBinary?: boolean;
}

/** Outcomes that are infrastructure signals for the roster, not the agent's work. */
const SIGNALS: ReadonlySet<OutcomeClass> = new Set([
  'usage-limit',
  'rate-limited',
  'outage',
  'auth',
]);

/** The need of a `BLOCKED_ON: <need>` claim on the last non-empty line, if any. */
export function blockedOnClaim(message: string): string | undefined {
  const lines = message
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const last = lines[lines.length - 1];
  if (last === undefined) return undefined;
  // Markdown emphasis or code ticks around the line are tolerated.
  const bare = last.replace(/^[`*_\s]+|[`*_\s]+$/g, '');
  const need = /^BLOCKED_ON:\s*(.+)$/.exec(bare)?.[1]?.trim();
  return need === undefined || need === '' ? undefined : need;
}

function usageEntries(
  parsed: ParsedRun,
  request: TurnRequest,
  prices: Readonly<Record<string, ModelPrice>>,
  estimate = true,
): UsageEntry[] {
  const { executor } = request;
  const fallbackModel = executor.model ?? 'unknown';
  const measured: UsageEntry[] = parsed.usage
    .filter((u) => totalTokens(u.tokens) > 0 || (u.costUsd ?? 0) > 0)
    .map((u) => ({
      executor: executor.id,
      model: u.model ?? fallbackModel,
      tokens: u.tokens,
      measured: true,
      costUsd: u.costUsd,
      costSource: u.costUsd === null ? 'none' : 'cli',
    }));
  // Estimate only a turn the model worked on; a refused turn (limit, auth) cost nothing.
  const estimated =
    estimate && measured.length === 0 && (parsed.outcome === 'ok' || parsed.outcome === 'failed')
      ? [estimateUsage(executor.id, fallbackModel, request.prompt, parsed.finalMessage)]
      : [];
  return priceUsage([...measured, ...estimated], prices);
}

export function runRecordOf(
  parsed: ParsedRun,
  facts: ProcessFacts,
  request: TurnRequest,
  prices: Readonly<Record<string, ModelPrice>> = {},
): CliRunRecord {
  let outcome = parsed.outcome;
  let detail = parsed.detail;
  if (facts.aborted) {
    outcome = 'failed';
    detail = 'cancelled';
  } else if (facts.timedOut) {
    const why = `timed out after ${Math.round(request.timeoutMs / 1000)}s`;
    // A CLI retrying a limit or an outage until we stop it is still that signal.
    if (!SIGNALS.has(outcome)) outcome = 'failed';
    detail = detail === '' ? why : `${why}: ${detail}`;
  }
  const blockedOn = outcome === 'ok' ? blockedOnClaim(parsed.finalMessage) : undefined;
  return {
    outcome,
    finalMessage: parsed.finalMessage,
    // A cancelled turn may not have started: only what the CLI measured counts.
    usage: usageEntries(parsed, request, prices, !facts.aborted),
    ...(outcome === 'usage-limit' && parsed.resetAt !== undefined
      ? { resetAt: parsed.resetAt }
      : {}),
    ...(blockedOn === undefined ? {} : { blockedOn }),
    ...(outcome === 'failed' && parsed.capped === true ? { capped: true } : {}),
    exitCode: facts.exitCode,
    timedOut: facts.timedOut,
    detail: outcome === 'ok' ? '' : tail(detail, 2000),
    durationMs: facts.durationMs,
  };
}
