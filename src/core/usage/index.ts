/**
 * Usage and cost: CLI-reported costs are kept; otherwise cost comes from the
 * dated price table (overridable by config `prices`) keyed by model; tokens
 * are estimated (characters ÷ 4) only when the CLI reported none.
 */
import type { ModelPrice } from '../config/types.js';
import type { TokenCounts, UsageEntry } from '../model.js';
import { PRICE_TABLE } from './prices.js';

export { PRICE_TABLE, PRICE_TABLE_DATE } from './prices.js';

/**
 * The price of a model: exact name first (overrides, then the table), then the
 * name without a provider prefix (`openai/gpt-5.6`) or a date suffix
 * (`claude-sonnet-4-5-20250929`), which vendors add to the same model.
 */
export function findPrice(
  model: string,
  overrides: Readonly<Record<string, ModelPrice>> = {},
): ModelPrice | undefined {
  const prices: Readonly<Record<string, ModelPrice>> = { ...PRICE_TABLE, ...overrides };
  const bare = model.slice(model.lastIndexOf('/') + 1);
  const undated = bare.replace(/[-@]\d{8}$/, '');
  for (const name of [model, bare, undated]) {
    const price = prices[name];
    if (price !== undefined) return price;
  }
  return undefined;
}

/** US dollars for the tokens at the price (per million tokens). */
export function costOf(tokens: TokenCounts, price: ModelPrice): number {
  return (
    (tokens.input * price.input +
      tokens.cachedInput * price.cachedInput +
      tokens.cacheWrite * price.cacheWrite +
      tokens.output * price.output) /
    1_000_000
  );
}

/**
 * Fills cost from the price table where the CLI reported none (costSource
 * 'price-table'); a CLI's own cost stays as it is; an unknown model stays
 * without cost ('none').
 */
export function priceUsage(
  entries: readonly UsageEntry[],
  prices: Readonly<Record<string, ModelPrice>> = {},
): UsageEntry[] {
  return entries.map((e) => {
    if (e.costSource === 'cli' && e.costUsd !== null) return e;
    const price = findPrice(e.model, prices);
    if (price === undefined) return { ...e, costUsd: null, costSource: 'none' };
    return { ...e, costUsd: costOf(e.tokens, price), costSource: 'price-table' };
  });
}

/** A token estimate for text the CLI did not measure: characters ÷ 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** One estimated entry (measured: false) from the prompt and the reply. */
export function estimateUsage(
  executor: string,
  model: string,
  prompt: string,
  reply: string,
): UsageEntry {
  return {
    executor,
    model,
    tokens: {
      input: estimateTokens(prompt),
      cachedInput: 0,
      cacheWrite: 0,
      output: estimateTokens(reply),
    },
    measured: false,
    costUsd: null,
    costSource: 'none',
  };
}
