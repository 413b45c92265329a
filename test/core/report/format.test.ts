import { describe, expect, it } from '@jest/globals';
import { formatDuration, formatTokens, formatUsd } from '../../../src/core/report/index.js';

describe('formatTokens', () => {
  it('keeps three significant digits with a unit', () => {
    expect(formatTokens(0)).toBe('0');
    expect(formatTokens(999)).toBe('999');
    expect(formatTokens(1234)).toBe('1.23k');
    expect(formatTokens(40_000)).toBe('40k');
    expect(formatTokens(1_234_567)).toBe('1.23M');
    expect(formatTokens(1_200_000)).toBe('1.2M');
    expect(formatTokens(2_500_000_000)).toBe('2.5B');
  });

  it('promotes a value that rounds up to the next unit', () => {
    expect(formatTokens(999_999)).toBe('1M');
    expect(formatTokens(999_500)).toBe('1M');
  });
});

describe('formatUsd', () => {
  it('shows cents and groups thousands', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(3.4)).toBe('$3.40');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(0.001)).toBe('<$0.01');
  });
});

describe('formatDuration', () => {
  it('reads like a person would say it', () => {
    expect(formatDuration(45_000)).toBe('45s');
    expect(formatDuration(245_000)).toBe('4m 05s');
    expect(formatDuration((64 * 60 + 30) * 1000)).toBe('1h 04m');
    expect(formatDuration(51 * 3600 * 1000)).toBe('2d 03h');
    expect(formatDuration(-5)).toBe('0s');
  });
});
