import { describe, expect, it } from '@jest/globals';
import {
  buildOpencodeInvocation,
  opencodeGivesUp,
  parseOpencodeOutput,
} from '../../../src/core/harness/opencode.js';
import { NOW, stream } from './fixtures.js';
import { requestFor } from './request.js';

describe('buildOpencodeInvocation', () => {
  it('runs opencode run with JSON events, error logs on stderr and the prompt after --', () => {
    const inv = buildOpencodeInvocation(requestFor('opencode', { prompt: '--not-a-flag' }), {
      binary: 'opencode',
    });
    expect(inv.argv).toEqual([
      'opencode',
      'run',
      '--format',
      'json',
      '--print-logs',
      '--log-level',
      'ERROR',
      '--title',
      'epicflow',
      '-m',
      'm-1',
      '--extra',
      '--',
      '--not-a-flag',
    ]);
    const config = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT ?? '{}');
    expect(config.permission).toEqual({ edit: 'allow', bash: 'allow', webfetch: 'allow' });
    expect(inv.env).toMatchObject({
      HOME: '/homes/opencode',
      XDG_DATA_HOME: '/homes/opencode/.local/share',
      OPENCODE_DISABLE_MODELS_FETCH: 'true',
      OPENCODE_DISABLE_AUTOUPDATE: 'true',
      OPENCODE_DISABLE_PROJECT_CONFIG: 'true',
    });
    expect(inv.env.GITHUB_TOKEN).toBeUndefined();
  });

  it('defines the bundled openai-compatible provider for a base URL', () => {
    const inv = buildOpencodeInvocation(requestFor('opencode'), {
      binary: 'opencode',
      baseUrl: 'http://127.0.0.1:4010',
    });
    expect(inv.argv).toEqual(expect.arrayContaining(['-m', 'epicflow/m-1']));
    const config = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT ?? '{}');
    expect(config.provider.epicflow).toEqual({
      npm: '@ai-sdk/openai-compatible',
      name: 'epicflow',
      options: { baseURL: 'http://127.0.0.1:4010/v1', apiKey: '{env:OPENAI_API_KEY}' },
      models: { 'm-1': { name: 'm-1' } },
    });
  });
});

describe('parseOpencodeOutput', () => {
  it('reads the answer of the last non-tool step and sums usage and cost over steps', () => {
    const run = parseOpencodeOutput(stream('opencode', 'ok.jsonl'), '', 0);
    expect(run.outcome).toBe('ok');
    expect(run.finalMessage).toBe('Created hello.txt.');
    expect(run.usage).toHaveLength(1);
    expect(run.usage[0]?.tokens).toEqual({
      input: 1400,
      cachedInput: 1700,
      cacheWrite: 100,
      output: 70,
    });
    expect(run.usage[0]?.costUsd).toBeCloseTo(0.0032, 10);
  });

  it.each([
    ['error-looking tool output', 'ok.jsonl', '', 0, 'ok'],
    ['a provider auth error', 'auth.jsonl', '', 1, 'auth'],
    ['an insufficient_quota 429', 'quota.jsonl', '', 1, 'usage-limit'],
  ] as const)('classifies %s', (_name, fixture, stderr, exitCode, outcome) => {
    expect(
      parseOpencodeOutput(stream('opencode', fixture), stderr, exitCode, { now: NOW }).outcome,
    ).toBe(outcome);
  });

  it('classifies a run we killed while opencode retried silently from its llm error logs', () => {
    const run = parseOpencodeOutput('', stream('opencode', 'retrying.stderr'), null);
    expect(run.outcome).toBe('outage');
    expect(run.detail).toMatch(/service=llm/);
    expect(parseOpencodeOutput('', 'INFO service=default started\n', null).outcome).toBe('failed');
  });

  it('classifies logfmt error lines without service=llm (opencode 1.18)', () => {
    const run = parseOpencodeOutput('', stream('opencode', 'quota-logfmt.stderr'), null);
    expect(run.outcome).toBe('usage-limit');
    expect(run.detail).toMatch(/exceeded your current quota/);
  });

  it('treats a zero cost (an unknown custom model) as no reported cost', () => {
    const run = parseOpencodeOutput(stream('opencode', 'unknown-model-cost.jsonl'), '', 0);
    expect(run.usage[0]?.costUsd).toBeNull();
  });
});

describe('opencodeGivesUp: where a turn opencode would retry without end is stopped', () => {
  it('at the first LLM error line naming a quota or an outage, in either log format', () => {
    const lines = (name: string): string[] => stream('opencode', name).split('\n');
    expect(lines('quota-logfmt.stderr').map(opencodeGivesUp)).toEqual(
      lines('quota-logfmt.stderr').map((l) => l.startsWith('level=ERROR')),
    );
    const retrying = lines('retrying.stderr');
    expect(retrying.findIndex(opencodeGivesUp)).toBe(1);
  });

  it('never at an info line or an error it does not classify', () => {
    expect(opencodeGivesUp('INFO  2026-11-30T09:00:00 +1ms service=default version=1.18.33')).toBe(
      false,
    );
    expect(
      opencodeGivesUp('level=ERROR message="stream error" error.error="something odd happened"'),
    ).toBe(false);
  });
});
