/**
 * Published list prices in US dollars per million tokens, for models whose CLI
 * reports no cost. Dated: prices change several times a year, so check the
 * vendors' pricing pages and override in config (`prices:`) when they move.
 *
 * Cache write is the 5-minute rate where vendors have two. Where a vendor
 * publishes no cached or cache-write rate (Gemini rows), the input rate is
 * used: an upper bound, never a guess below the real price.
 */
import type { ModelPrice } from '../config/types.js';

export const PRICE_TABLE_DATE = '2026-11-30';

const p = (input: number, cachedInput: number, cacheWrite: number, output: number): ModelPrice => ({
  input,
  cachedInput,
  cacheWrite,
  output,
});

export const PRICE_TABLE: Readonly<Record<string, ModelPrice>> = {
  // OpenAI (developers.openai.com model pages; list prices, no promotions)
  'gpt-6.2-sol': p(2.0, 0.1, 2.5, 10.0),
  'gpt-6.1-sol': p(2.0, 0.1, 2.5, 10.0),
  'gpt-5.6-sol': p(5.0, 0.5, 6.25, 30.0),
  'gpt-5.6': p(5.0, 0.5, 6.25, 30.0),
  'gpt-5.5': p(5.0, 0.5, 5.0, 30.0),
  'gpt-5.4': p(2.5, 0.25, 2.5, 15.0),
  // Anthropic (platform.claude.com pricing)
  'claude-opus-5-5': p(4.0, 0.2, 5.0, 20.0),
  'claude-opus-5': p(5.0, 0.5, 6.25, 25.0),
  'claude-opus-4-8': p(5.0, 0.5, 6.25, 25.0),
  'claude-opus-4-7': p(5.0, 0.5, 6.25, 25.0),
  'claude-opus-4-6': p(5.0, 0.5, 6.25, 25.0),
  'claude-opus-4-5': p(5.0, 0.5, 6.25, 25.0),
  'claude-sonnet-5-5': p(2.0, 0.1, 2.5, 10.0),
  'claude-sonnet-5': p(2.0, 0.2, 2.5, 10.0),
  'claude-sonnet-4-6': p(3.0, 0.3, 3.75, 15.0),
  'claude-sonnet-4-5': p(3.0, 0.3, 3.75, 15.0),
  'claude-sonnet-4': p(3.0, 0.3, 3.75, 15.0),
  'claude-haiku-5-5': p(0.1, 0.01, 0.125, 0.5),
  'claude-haiku-4-5': p(1.0, 0.1, 1.25, 5.0),
  // Google (ai.google.dev pricing; prompts up to 200k tokens)
  'gemini-3.8-flash': p(0.75, 0.75, 0.75, 3.75),
  'gemini-3.5-flash': p(1.5, 1.5, 1.5, 9.0),
  'gemini-3.5-flash-lite': p(0.3, 0.3, 0.3, 2.5),
  'gemini-3.1-pro-preview': p(2.0, 2.0, 2.0, 12.0),
  'gemini-2.5-pro': p(1.25, 1.25, 1.25, 10.0),
  'gemini-2.5-flash': p(0.3, 0.3, 0.3, 2.5),
};
