import { describe, expect, it } from '@jest/globals';
import { buildClaudeInvocation, parseClaudeOutput } from '../../../src/core/harness/claude.js';
import type { TurnRequest } from '../../../src/core/executor.js';
import { NOW, stream } from './fixtures.js';

const request: TurnRequest = {
  epic: '42',
  story: 'api',
  round: 2,
  role: 'judge',
  prompt: 'Judge the diff.',
  worktree: '/repo/worktree',
  executor: {
    id: 'claude',
    harness: 'claude',
    model: 'claude-sonnet-4-5',
    args: ['--max-turns', '30'],
    slots: 1,
    priority: 2,
    roles: ['coder', 'judge'],
    env: {},
  },
  env: { ANTHROPIC_API_KEY: 'sk-ant-1', GITHUB_TOKEN: 'ghs_1', HOME: '/root' },
  home: '/homes/claude',
  timeoutMs: 1000,
};

describe('buildClaudeInvocation', () => {
  it('runs claude -p with stream-json, bypass permissions, its own settings only, the model and extra args', () => {
    const inv = buildClaudeInvocation(request, { binary: 'claude' });
    expect(inv.argv).toEqual([
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'bypassPermissions',
      '--setting-sources',
      'user',
      '--model',
      'claude-sonnet-4-5',
      '--max-turns',
      '30',
    ]);
    expect(inv.stdin).toBe('Judge the diff.');
  });

  it('isolates HOME (an executor env cannot override it), quiets non-model traffic, no GitHub token', () => {
    const { env } = buildClaudeInvocation(request, {
      binary: 'claude',
      baseUrl: 'http://127.0.0.1:4010',
    });
    expect(env).toMatchObject({
      HOME: '/homes/claude',
      CLAUDE_CONFIG_DIR: '/homes/claude/.claude',
      CLAUDE_CODE_TMPDIR: '/homes/claude/.claude/tmp',
      ANTHROPIC_API_KEY: 'sk-ant-1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      IS_SANDBOX: '1',
    });
    expect(env.GITHUB_TOKEN).toBeUndefined();
  });
});

describe('parseClaudeOutput', () => {
  it.each([
    ['a recorded successful turn', 'ok.jsonl', 0, 'ok', /^$/],
    ['a recorded subscription limit', 'limit.jsonl', 1, 'usage-limit', /hit your session limit/],
    ['a recorded 429', 'rate.jsonl', 1, 'rate-limited', /429/],
    ['a recorded 529', 'overload.jsonl', 1, 'outage', /529 Overloaded/],
    ['a recorded 401', 'auth.jsonl', 1, 'auth', /Invalid API key/],
    [
      'a limit that exits 0 (is_error with subtype success)',
      'limit-exit0.jsonl',
      0,
      'usage-limit',
      /hit your limit/,
    ],
    ['the older limit wording', 'limit-epoch.jsonl', 1, 'usage-limit', /usage limit reached/],
    ['an exhausted credit balance', 'billing.jsonl', 1, 'usage-limit', /Credit balance/],
    ['the turn cap', 'max-turns.jsonl', 1, 'failed', /error_max_turns/],
    ['error-looking tool results, retries and warnings', 'trap-tool-output.jsonl', 0, 'ok', /^$/],
    ['a run killed mid-tool', 'killed.jsonl', null, 'failed', /without a result/],
  ] as const)('classifies %s', (_name, fixture, exitCode, outcome, detail) => {
    const run = parseClaudeOutput(stream('claude', fixture), '', exitCode, { now: NOW });
    expect(run.outcome).toBe(outcome);
    expect(run.detail).toMatch(detail);
    // Only the turn cap is the agent's own stop: a kill is a crash (retried by the engine).
    expect(run.capped === true).toBe(fixture === 'max-turns.jsonl');
  });

  it('reads the final message and usage with cost per model (subagents included)', () => {
    const run = parseClaudeOutput(stream('claude', 'trap-tool-output.jsonl'), '', 0);
    expect(run.finalMessage).toBe(
      'Fixed the 401 Unauthorized handling and the 529 Overloaded retry.',
    );
    expect(run.usage).toEqual([
      {
        model: 'claude-sonnet-4-5',
        tokens: { input: 1900, cachedInput: 1200, cacheWrite: 300, output: 80 },
        costUsd: 0.0111,
      },
      {
        model: 'claude-haiku-4-5',
        tokens: { input: 400, cachedInput: 0, cacheWrite: 0, output: 20 },
        costUsd: 0.0012,
      },
    ]);
  });

  it.each([
    ['the rate_limit_event', 'limit.jsonl', '2026-11-30T09:59:29.000Z'],
    ['a clock time in a named zone', 'limit-exit0.jsonl', '2026-12-01T00:00:00.000Z'],
    ['an epoch after the bar', 'limit-epoch.jsonl', '2026-11-30T15:00:00.000Z'],
  ])('reads the reset time from %s', (_name, fixture, resetAt) => {
    expect(parseClaudeOutput(stream('claude', fixture), '', 0, { now: NOW }).resetAt).toBe(resetAt);
  });

  it('keeps the usage seen before a kill, each message counted once', () => {
    const run = parseClaudeOutput(stream('claude', 'killed.jsonl'), '', null);
    expect(run.usage).toEqual([
      {
        model: 'claude-sonnet-4-5',
        tokens: { input: 1000, cachedInput: 100, cacheWrite: 50, output: 20 },
        costUsd: null,
      },
    ]);
  });

  it('reports the root guard as a configuration failure of the executor', () => {
    const run = parseClaudeOutput(
      '',
      '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n',
      1,
    );
    expect(run.outcome).toBe('auth');
  });
});
