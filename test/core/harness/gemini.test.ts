import { describe, expect, it } from '@jest/globals';
import { buildGeminiInvocation, parseGeminiOutput } from '../../../src/core/harness/gemini.js';
import { NOW, stream } from './fixtures.js';
import { requestFor } from './request.js';

describe('buildGeminiInvocation', () => {
  it('runs gemini -p headless in yolo mode with stream-json, trusting the worktree', () => {
    const inv = buildGeminiInvocation(requestFor('gemini'), {
      binary: 'gemini',
      baseUrl: 'http://127.0.0.1:4010',
    });
    expect(inv.argv).toEqual([
      'gemini',
      '--prompt=Build the API.',
      '--output-format',
      'stream-json',
      '--approval-mode',
      'yolo',
      '-m',
      'm-1',
      '--extra',
    ]);
    expect(inv.env).toMatchObject({
      HOME: '/homes/gemini',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:4010',
      SOME_KEY: 'k',
    });
    expect(inv.env.GITHUB_TOKEN).toBeUndefined();
    expect(inv.env.GH_TOKEN).toBeUndefined();
    expect(inv.files?.[0]?.path).toBe('/homes/gemini/.gemini/settings.json');
    expect(JSON.parse(inv.files?.[0]?.content ?? '{}')).toMatchObject({
      telemetry: { enabled: false },
      privacy: { usageStatisticsEnabled: false },
      // Without it a base URL makes headless auth `gateway`: exit 41.
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
  });
});

describe('which workspace gemini trusts', () => {
  const settings = (role: 'coder' | 'judge' | 'verifier' | 'planner' | 'reviewer') => {
    const inv = buildGeminiInvocation(requestFor('gemini', { role }), { binary: 'gemini' });
    return {
      trust: inv.env.GEMINI_CLI_TRUST_WORKSPACE,
      security: (JSON.parse(inv.files?.[0]?.content ?? '{}') as { security?: unknown }).security,
    };
  };

  // One real helper run shows what these settings do (test/adapters/executors/gemini.contract.test.ts).
  it.each(['judge', 'verifier', 'planner', 'reviewer'] as const)(
    'a %s never trusts the tree a coder wrote, with folder trust off so it runs headless',
    (role) => {
      expect(settings(role)).toEqual({
        trust: 'false',
        security: { folderTrust: { enabled: false } },
      });
    },
  );

  it("a coder trusts its own tree (else yolo is downgraded and a new folder's turn exits 55)", () => {
    expect(settings('coder')).toEqual({ trust: 'true', security: {} });
  });
});

describe('parseGeminiOutput', () => {
  it.each([
    ['a successful turn with error-looking tool output', 'ok.jsonl', '', 0, 'ok'],
    ['a per-day quota', 'quota.jsonl', '', 1, 'usage-limit'],
    ['exhausted capacity with a long reset', 'capacity.jsonl', '', 1, 'usage-limit'],
    [
      'exhausted capacity with a reset within two minutes',
      'capacity-short.jsonl',
      '',
      1,
      'rate-limited',
    ],
    ['an overloaded model', 'outage.jsonl', '', 1, 'outage'],
  ] as const)('classifies %s', (_name, fixture, stderr, exitCode, outcome) => {
    expect(
      parseGeminiOutput(stream('gemini', fixture), stderr, exitCode, { now: NOW }).outcome,
    ).toBe(outcome);
  });

  it('classifies the JSON error on stderr and the configuration exit codes', () => {
    expect(parseGeminiOutput('', stream('gemini', 'auth.stderr'), 41).outcome).toBe('auth');
    const untrusted = parseGeminiOutput('', stream('gemini', 'untrusted.stderr'), 55);
    expect(untrusted.outcome).toBe('auth');
    expect(untrusted.detail).toMatch(/not running in a trusted directory/);
    expect(parseGeminiOutput('', '', 53).outcome).toBe('failed');
  });

  it('reads the final message after the last tool call and the usage', () => {
    const run = parseGeminiOutput(stream('gemini', 'ok.jsonl'), '', 0);
    expect(run.finalMessage).toBe('Created hello.txt.\nBLOCKED_ON: src/api.ts');
    expect(run.usage).toEqual([
      {
        model: 'gemini-3.5-flash',
        tokens: { input: 3000, cachedInput: 1000, cacheWrite: 0, output: 150 },
        costUsd: null,
      },
    ]);
  });

  it('reads usage per model when stats carry models (thoughts billed as output)', () => {
    const run = parseGeminiOutput(stream('gemini', 'ok-models.jsonl'), '', 0);
    expect(run.usage).toEqual([
      {
        model: 'gemini-3.1-pro-preview',
        tokens: { input: 2500, cachedInput: 500, cacheWrite: 0, output: 200 },
        costUsd: null,
      },
      {
        model: 'gemini-3.5-flash-lite',
        tokens: { input: 1000, cachedInput: 0, cacheWrite: 0, output: 10 },
        costUsd: null,
      },
    ]);
  });

  it('reads the flat per-model stats of stream-json (thoughts only in total_tokens)', () => {
    const run = parseGeminiOutput(stream('gemini', 'ok-flat-models.jsonl'), '', 0);
    expect(run.usage).toEqual([
      {
        model: 'gemini-2.5-flash',
        tokens: { input: 2000, cachedInput: 200, cacheWrite: 0, output: 50 },
        costUsd: null,
      },
    ]);
  });

  it('reads a daily-quota result as a usage limit', () => {
    const run = parseGeminiOutput(stream('gemini', 'daily-quota-result.jsonl'), '', 173);
    expect(run.outcome).toBe('usage-limit');
  });

  it('reads the capacity reset time', () => {
    const run = parseGeminiOutput(stream('gemini', 'capacity.jsonl'), '', 1, { now: NOW });
    expect(run.resetAt).toBe('2026-11-30T11:27:00.000Z');
  });
});
