import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  costOf,
  estimateTokens,
  estimateUsage,
  findPrice,
  PRICE_TABLE,
  PRICE_TABLE_DATE,
  priceUsage,
} from '../../../src/core/usage/index.js';
import type { UsageEntry } from '../../../src/core/model.js';

const tokens = { input: 1_000_000, cachedInput: 2_000_000, cacheWrite: 100_000, output: 10_000 };

function entry(model: string, over: Partial<UsageEntry> = {}): UsageEntry {
  return {
    executor: 'e',
    model,
    tokens,
    measured: true,
    costUsd: null,
    costSource: 'none',
    ...over,
  };
}

describe('price table', () => {
  it('is dated and covers the common models of each vendor', () => {
    expect(PRICE_TABLE_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const model of ['gpt-5.6', 'claude-sonnet-4-5', 'claude-opus-4-5', 'gemini-2.5-pro']) {
      expect(PRICE_TABLE[model]).toBeDefined();
    }
  });

  it('finds a model by exact name, without a provider prefix or a date suffix', () => {
    expect(findPrice('claude-sonnet-4-5')).toBe(PRICE_TABLE['claude-sonnet-4-5']);
    expect(findPrice('anthropic/claude-sonnet-4-5-20250929')).toBe(
      PRICE_TABLE['claude-sonnet-4-5'],
    );
    expect(findPrice('openai/gpt-5.6')).toBe(PRICE_TABLE['gpt-5.6']);
    expect(findPrice('my-local-model')).toBeUndefined();
  });
});

describe('priceUsage', () => {
  it('prices from the table when the CLI reported no cost', () => {
    const [priced] = priceUsage([entry('claude-sonnet-4-5')]);
    // 1M × $3 + 2M × $0.30 + 0.1M × $3.75 + 0.01M × $15
    expect(priced?.costUsd).toBeCloseTo(3 + 0.6 + 0.375 + 0.15, 10);
    expect(priced?.costSource).toBe('price-table');
  });

  it('keeps a cost the CLI reported', () => {
    const cli = entry('claude-sonnet-4-5', { costUsd: 1.23, costSource: 'cli' });
    expect(priceUsage([cli])).toEqual([cli]);
  });

  it('lets config prices override the table and price unknown models', () => {
    const prices = {
      'claude-sonnet-4-5': { input: 1, cachedInput: 0, cacheWrite: 0, output: 0 },
      'my-local-model': { input: 0, cachedInput: 0, cacheWrite: 0, output: 100 },
    };
    const [a, b] = priceUsage([entry('claude-sonnet-4-5'), entry('my-local-model')], prices);
    expect(a?.costUsd).toBeCloseTo(1, 10);
    expect(b?.costUsd).toBeCloseTo(1, 10);
  });

  it('leaves an unknown model without cost', () => {
    expect(priceUsage([entry('my-local-model')])[0]).toMatchObject({
      costUsd: null,
      costSource: 'none',
    });
  });

  it('cost is linear in tokens and never negative', () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.nat(10_000_000), (a, b) => {
        const price = PRICE_TABLE['gpt-5.6'];
        if (price === undefined) return false;
        const t = (n: number) => ({ input: n, cachedInput: n, cacheWrite: n, output: n });
        const sum = costOf(t(a), price) + costOf(t(b), price);
        return costOf(t(a + b), price) >= 0 && Math.abs(costOf(t(a + b), price) - sum) < 1e-6;
      }),
    );
  });
});

describe('estimates', () => {
  it('estimates tokens as characters ÷ 4, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
  });

  it('marks an estimated entry as not measured', () => {
    expect(estimateUsage('codex', 'gpt-5.6', 'x'.repeat(40), 'y'.repeat(3))).toEqual({
      executor: 'codex',
      model: 'gpt-5.6',
      tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 1 },
      measured: false,
      costUsd: null,
      costSource: 'none',
    });
  });
});
