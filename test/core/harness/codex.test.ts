import { describe, expect, it } from '@jest/globals';
import { buildCodexInvocation, parseCodexOutput } from '../../../src/core/harness/codex.js';
import type { TurnRequest } from '../../../src/core/executor.js';
import { NOW, stream } from './fixtures.js';

const request: TurnRequest = {
  epic: '42',
  story: 'api',
  round: 1,
  role: 'coder',
  prompt: 'Build the API.',
  worktree: '/repo/worktree',
  executor: {
    id: 'codex',
    harness: 'codex',
    model: 'gpt-5.6',
    args: ['-c', 'model_reasoning_effort="high"'],
    slots: 1,
    priority: 1,
    roles: ['coder'],
    env: {},
  },
  env: { OPENAI_API_KEY: 'sk-1', GITHUB_TOKEN: 'ghs_1', GH_TOKEN: 'gho_1', RUST_LOG: 'debug' },
  home: '/homes/codex',
  timeoutMs: 1000,
};

describe('buildCodexInvocation', () => {
  it('runs codex exec headless in the worktree with the prompt on stdin', () => {
    const inv = buildCodexInvocation(request, { binary: 'codex' });
    expect(inv.argv.slice(0, 10)).toEqual([
      'codex',
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--sandbox',
      'danger-full-access',
      '--ephemeral',
      '-C',
      '/repo/worktree',
      '-m',
    ]);
    expect(inv.argv[10]).toBe('gpt-5.6');
    expect(inv.argv).toEqual(
      expect.arrayContaining(['analytics.enabled=false', 'features.plugins=false']),
    );
    // executor.args come after ours, the stdin marker last.
    expect(inv.argv.slice(-3)).toEqual(['-c', 'model_reasoning_effort="high"', '-']);
    expect(inv.stdin).toBe('Build the API.');
    expect(inv.argv.join(' ')).not.toContain('model_provider=');
  });

  it('isolates the home, keeps the API key, drops GitHub tokens and debug logging', () => {
    const { env } = buildCodexInvocation(request, { binary: 'codex' });
    expect(env).toMatchObject({
      CODEX_HOME: '/homes/codex',
      HOME: '/homes/codex',
      XDG_CONFIG_HOME: '/homes/codex/.config',
      OPENAI_API_KEY: 'sk-1',
      TZ: 'UTC',
    });
    expect(env.GH_TOKEN).toBeUndefined();
    expect(env.GITHUB_TOKEN).toBeUndefined();
    expect(env.RUST_LOG).toBeUndefined();
  });

  it('defines a Responses-API provider for a base URL', () => {
    const inv = buildCodexInvocation(request, {
      binary: '/opt/codex',
      baseUrl: 'http://127.0.0.1:4010/',
    });
    const config = inv.argv.filter((_, i) => inv.argv[i - 1] === '-c');
    expect(config).toEqual(
      expect.arrayContaining([
        'model_providers.epicflow.base_url="http://127.0.0.1:4010/v1"',
        'model_providers.epicflow.wire_api="responses"',
        'model_providers.epicflow.env_key="OPENAI_API_KEY"',
        'model_providers.epicflow.supports_websockets=false',
        'model_provider="epicflow"',
      ]),
    );
  });

  it('writes a ChatGPT seat (CODEX_AUTH_JSON) to auth.json in the home, not into the env', () => {
    const inv = buildCodexInvocation(
      { ...request, env: { CODEX_AUTH_JSON: '{"tokens":{}}' } },
      { binary: 'codex' },
    );
    expect(inv.files).toEqual([{ path: '/homes/codex/auth.json', content: '{"tokens":{}}' }]);
    expect(inv.env.CODEX_AUTH_JSON).toBeUndefined();
  });
});

describe('parseCodexOutput', () => {
  it.each([
    // name, fixture, exit code, outcome, detail pattern
    ['a recorded successful turn', 'ok.jsonl', 0, 'ok', /^$/],
    ['a recorded usage limit', 'limit.jsonl', 1, 'usage-limit', /hit your usage limit/],
    ['a recorded rate limit', 'rate.jsonl', 1, 'rate-limited', /429 Too Many Requests/],
    ['a recorded 503', 'overload.jsonl', 1, 'outage', /503 Service Unavailable/],
    ['a recorded 401', 'auth.jsonl', 1, 'auth', /401 Unauthorized/],
    ['an API-key quota', 'api-quota.jsonl', 1, 'usage-limit', /Quota exceeded/],
    [
      'a dropped stream after reconnects',
      'stream-disconnected.jsonl',
      1,
      'outage',
      /stream disconnected/,
    ],
    ['error-looking tool output and transient errors', 'trap-tool-output.jsonl', 0, 'ok', /^$/],
    ['a run killed mid-command', 'killed.jsonl', null, 'failed', /without finishing the turn/],
  ] as const)('classifies %s', (_name, fixture, exitCode, outcome, detail) => {
    const run = parseCodexOutput(stream('codex', fixture), '', exitCode, { now: NOW });
    expect(run.outcome).toBe(outcome);
    expect(run.detail).toMatch(detail);
  });

  it('reads the final message and the usage codex summed over the turn', () => {
    const run = parseCodexOutput(stream('codex', 'ok.jsonl'), '', 0, { now: NOW });
    expect(run.finalMessage).toBe('done\nBLOCKED_ON: x');
    expect(run.usage).toEqual([
      {
        model: null,
        tokens: { input: 2000, cachedInput: 200, cacheWrite: 0, output: 40 },
        costUsd: null,
      },
    ]);
  });

  it('never takes an error from command output or the agent message', () => {
    const run = parseCodexOutput(stream('codex', 'trap-tool-output.jsonl'), '', 0, { now: NOW });
    expect(run.finalMessage).toMatch(/^Added retry on rate limit/);
    expect(run.usage[0]?.tokens).toEqual({
      input: 1400,
      cachedInput: 4000,
      cacheWrite: 0,
      output: 300,
    });
  });

  it.each([
    ['a clock time (codex runs with TZ=UTC)', 'limit.jsonl', '2026-11-30T09:57:00.000Z'],
    ['a date and time', 'usage-limit-date.jsonl', '2026-12-03T20:08:00.000Z'],
    ['a duration', 'usage-limit-days.jsonl', '2026-12-03T02:11:00.000Z'],
  ])('reads the reset time from %s', (_name, fixture, resetAt) => {
    const run = parseCodexOutput(stream('codex', fixture), '', 1, { now: NOW });
    expect(run.outcome).toBe('usage-limit');
    expect(run.resetAt).toBe(resetAt);
  });

  it('falls back to stderr when codex could not start a turn', () => {
    const run = parseCodexOutput('', 'Error: 401 Unauthorized: missing bearer token\n', 1);
    expect(run.outcome).toBe('auth');
    expect(run.detail).toBe('Error: 401 Unauthorized: missing bearer token');
  });
});
