/**
 * `EPICFLOW_USAGE {json}` lines of the `command` harness (docs/executors.md) and the
 * `BLOCKED_ON: <need>` claim, parsed from an agent's stdout. Pure functions.
 */
import { z } from 'zod';
import { addTokens, ZERO_TOKENS, type TokenCounts, type UsageEntry } from '../../core/model.js';

const USAGE_PREFIX = 'EPICFLOW_USAGE';

const Count = z.number().int().nonnegative();

const UsageLine = z.object({
  input: Count,
  output: Count,
  model: z.string().min(1).optional(),
  cachedInput: Count.optional(),
  cacheWrite: Count.optional(),
  costUsd: z.number().nonnegative().optional(),
});

export interface ParsedUsage {
  readonly model: string | undefined;
  readonly tokens: TokenCounts;
  readonly costUsd: number | undefined;
}

export function isUsageLine(line: string): boolean {
  const t = line.trim();
  return (
    t === USAGE_PREFIX || t.startsWith(`${USAGE_PREFIX} `) || t.startsWith(`${USAGE_PREFIX}\t`)
  );
}

/**
 * Parses one stdout line. Returns null for a line that is not a usage line, a
 * parsed usage, or `{ error }` for a malformed one (reported, never fatal).
 */
export function parseUsageLine(line: string): ParsedUsage | { error: string } | null {
  if (!isUsageLine(line)) return null;
  const payload = line.trim().slice(USAGE_PREFIX.length).trim();
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    return { error: `not JSON: ${payload.slice(0, 120)}` };
  }
  const parsed = UsageLine.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return { error: `${where}${issue?.message ?? 'invalid'} in ${payload.slice(0, 120)}` };
  }
  const v = parsed.data;
  return {
    model: v.model,
    tokens: {
      input: v.input,
      output: v.output,
      cachedInput: v.cachedInput ?? 0,
      cacheWrite: v.cacheWrite ?? 0,
    },
    costUsd: v.costUsd,
  };
}

/** Sums usage lines into one measured entry per model, in order of first appearance. */
export function sumUsage(
  executor: string,
  defaultModel: string,
  lines: readonly ParsedUsage[],
): UsageEntry[] {
  const byModel = new Map<string, { tokens: TokenCounts; cost: number | null }>();
  for (const u of lines) {
    const model = u.model ?? defaultModel;
    const acc = byModel.get(model) ?? { tokens: ZERO_TOKENS, cost: null };
    acc.tokens = addTokens(acc.tokens, u.tokens);
    if (u.costUsd !== undefined) acc.cost = (acc.cost ?? 0) + u.costUsd;
    byModel.set(model, acc);
  }
  return [...byModel].map(([model, acc]) => ({
    executor,
    model,
    tokens: acc.tokens,
    measured: true,
    costUsd: acc.cost,
    costSource: acc.cost === null ? 'none' : 'cli',
  }));
}

/** One estimated entry (characters ÷ 4) when the agent reported no usage. */
export function estimateUsage(
  executor: string,
  model: string,
  promptChars: number,
  outputChars: number,
): UsageEntry {
  return {
    executor,
    model,
    tokens: {
      input: Math.ceil(promptChars / 4),
      cachedInput: 0,
      cacheWrite: 0,
      output: Math.ceil(outputChars / 4),
    },
    measured: false,
    costUsd: null,
    costSource: 'none',
  };
}

/**
 * The need of a `BLOCKED_ON: <need>` claim on the last non-empty line (usage
 * lines aside), with markdown emphasis or code ticks around it tolerated.
 */
export function blockedOnClaim(output: string): string | undefined {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !isUsageLine(l));
  const last = lines[lines.length - 1];
  if (last === undefined) return undefined;
  const bare = last.replace(/^[`*_\s]+|[`*_\s]+$/g, '');
  const m = /^BLOCKED_ON:\s*(.+)$/.exec(bare);
  const need = m?.[1]?.trim();
  return need === undefined || need === '' ? undefined : need;
}
