import { describe, expect, it } from '@jest/globals';
import { parseClaudeOutput } from '../../../src/core/harness/claude.js';
import { parseCodexOutput } from '../../../src/core/harness/codex.js';
import { parseGeminiOutput } from '../../../src/core/harness/gemini.js';
import { classifyMessage, parseDuration, parseResetAt } from '../../../src/core/harness/signals.js';

const NOW = new Date('2026-11-30T08:57:00Z');

describe('classifyMessage', () => {
  it.each([
    ["You've hit your usage limit. Try again at 9:46 AM.", 'usage-limit'],
    ['429 {"error":{"type":"insufficient_quota"}}', 'usage-limit'],
    ['unexpected status 401 Unauthorized: Incorrect API key provided.', 'auth'],
    ['exceeded retry limit, last status: 429 Too Many Requests', 'rate-limited'],
    ['API Error: 529 Overloaded.', 'outage'],
    ['stream disconnected before completion', 'outage'],
    ['Error: connect ETIMEDOUT 104.18.32.47:443', 'outage'],
    ['request timed out after 600s', 'outage'],
    ['the tool call timed out', 'failed'],
    ['the patch did not apply', 'failed'],
  ] as const)('%s → %s', (message, outcome) => {
    expect(classifyMessage(message)).toBe(outcome);
  });

  it('does not read a status code out of a URL', () => {
    expect(classifyMessage('request failed, url: http://127.0.0.1:429/v1/responses')).toBe(
      'failed',
    );
    expect(classifyMessage('could not parse https://example.com/401/x')).toBe('failed');
  });
});

describe('parseResetAt', () => {
  it.each([
    ['try again at 9:46 AM.', '2026-11-30T09:46:00.000Z'],
    ['try again at 8:30 AM.', '2026-12-01T08:30:00.000Z'],
    ['try again at Dec 3rd, 2026 8:08 PM.', '2026-12-03T20:08:00.000Z'],
    ['resets 4pm (America/Los_Angeles)', '2026-12-01T00:00:00.000Z'],
    ['resets 9:47am (UTC)', '2026-11-30T09:47:00.000Z'],
    ['resets Dec 5, 9am (Europe/Berlin)', '2026-12-05T08:00:00.000Z'],
    ['try again in 2 days 17 hours 14 minutes.', '2026-12-03T02:11:00.000Z'],
    ['Please try again in 3.681s.', '2026-11-30T08:57:03.681Z'],
    ['Your quota will reset after 2h30m.', '2026-11-30T11:27:00.000Z'],
    ['Claude AI usage limit reached|1796050800', '2026-11-30T15:00:00.000Z'],
  ])('%s', (message, resetAt) => {
    expect(parseResetAt(message, NOW)).toBe(resetAt);
  });

  it('gives no time for an unknown zone or no time at all', () => {
    expect(parseResetAt('resets 4pm (Mars/Olympus)', NOW)).toBeUndefined();
    expect(parseResetAt('usage limit reached', NOW)).toBeUndefined();
    expect(parseResetAt('try again at 9:46 AM', undefined)).toBeUndefined();
  });
});

describe('parseDuration', () => {
  it('reads units from milliseconds to days', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1 day 2 hrs 3 mins 4 secs')).toBe(
      86_400_000 + 7_200_000 + 180_000 + 4000,
    );
    expect(parseDuration('soon')).toBeUndefined();
  });
});

describe('a CLI that stopped before its own end, saying nothing', () => {
  it.each([
    ['claude', parseClaudeOutput, 'claude ended without a result (exit code 137)'],
    ['gemini', parseGeminiOutput, 'gemini ended without a result (exit code 137)'],
    ['codex', parseCodexOutput, 'codex ended without finishing the turn (exit code 137)'],
  ] as const)(
    '%s: failed, naming what it never printed and its exit code',
    (_cli, parse, detail) => {
      expect(parse('', '', 137)).toMatchObject({ outcome: 'failed', detail });
      expect(parse('', '', null).detail).toBe(detail.replace('137', 'none'));
    },
  );
});
