import { describe, expect, it } from '@jest/globals';
import { buildAiderInvocation, parseAiderOutput } from '../../../src/core/harness/aider.js';
import { stream } from './fixtures.js';
import { requestFor } from './request.js';

describe('buildAiderInvocation', () => {
  it('runs aider once on a per-turn prompt file in the home, without commits or analytics', () => {
    const inv = buildAiderInvocation(requestFor('aider', { round: 3 }), {
      binary: 'aider',
      baseUrl: 'http://127.0.0.1:4010',
    });
    const promptFile = '/homes/aider/prompts/42-api-coder-3.md';
    expect(inv.files).toEqual([{ path: promptFile, content: 'Build the API.' }]);
    expect(inv.argv.slice(0, 3)).toEqual(['aider', '--message-file', promptFile]);
    expect(inv.argv).toEqual(
      expect.arrayContaining([
        '--yes-always',
        '--no-auto-commits',
        '--analytics-disable',
        '--no-check-update',
      ]),
    );
    expect(inv.argv.slice(-5)).toEqual([
      '--model',
      'openai/m-1',
      '--openai-api-base',
      'http://127.0.0.1:4010/v1',
      '--extra',
    ]);
    expect(inv.env.HOME).toBe('/homes/aider');
    expect(inv.env.GH_TOKEN).toBeUndefined();
  });
});

describe('parseAiderOutput', () => {
  it.each([
    ['recovered retries and error-looking command output', 'ok.txt', 'ok'],
    ['error-looking test output after the last reply', 'trap-tail.txt', 'ok'],
    ['a rate limit it gave up on (exit 0)', 'rate-limited.txt', 'rate-limited'],
    ['an exhausted quota (exit 0)', 'quota.txt', 'usage-limit'],
    ['a bad API key (exit 0)', 'auth.txt', 'auth'],
    ['servers down (exit 0)', 'outage.txt', 'outage'],
  ] as const)('classifies %s', (_name, fixture, outcome) => {
    expect(parseAiderOutput(stream('aider', fixture), '', 0).outcome).toBe(outcome);
  });

  it('sums the usage lines and keeps the session cost', () => {
    const run = parseAiderOutput(stream('aider', 'ok.txt'), '', 0);
    expect(run.usage).toEqual([
      {
        model: null,
        tokens: { input: 1300 + 12000, cachedInput: 1000, cacheWrite: 0, output: 120 + 1234 },
        costUsd: 0.0781,
      },
    ]);
    expect(run.finalMessage).toMatch(/Done: hello.txt now contains hello\.$/);
    expect(run.finalMessage).not.toMatch(/Tokens:/);
  });

  it('reads cache writes', () => {
    const run = parseAiderOutput(stream('aider', 'trap-tail.txt'), '', 0);
    expect(run.usage[0]?.tokens).toEqual({
      input: 1100,
      cachedInput: 0,
      cacheWrite: 2000,
      output: 410,
    });
  });

  it('fails a non-zero exit without error lines', () => {
    const run = parseAiderOutput('', 'aider: error: unrecognized arguments: --bogus\n', 2);
    expect(run.outcome).toBe('failed');
    expect(run.detail).toMatch(/unrecognized arguments/);
  });
});
