import { describe, expect, it } from '@jest/globals';
import {
  afterRetries,
  backoffMs,
  decideAfterHelperTurn,
  decideAfterJudge,
  decideAfterTurn,
  formatWait,
  retryTransient,
  startHelperCall,
  startRounds,
  transientFault,
  type HelperFacts,
  type RoundRules,
  type TurnEnd,
  type TurnFacts,
} from '../../../src/core/story/index.js';
import type { ExecutorConfig } from '../../../src/core/config/types.js';

const end = (over: Partial<TurnEnd>): TurnEnd => ({
  outcome: 'failed',
  missingBinary: false,
  detail: '',
  ...over,
});

describe('transientFault', () => {
  it.each<[string, Partial<TurnEnd>, string | null]>([
    [
      'an outage naming its 5xx',
      { outcome: 'outage', detail: 'API Error: 503 Service Unavailable' },
      'outage (HTTP 503)',
    ],
    ['an outage naming none', { outcome: 'outage', detail: 'the model is overloaded' }, 'outage'],
    [
      'a port in a URL is no status',
      { outcome: 'outage', detail: 'connection refused http://127.0.0.1:503/v1' },
      'outage',
    ],
    [
      'an outage that is a network timeout',
      { outcome: 'outage', detail: 'stream disconnected: request timed out' },
      'network timeout',
    ],
    [
      'a CLI that died on a network timeout',
      { exitCode: 1, detail: 'Error: connect ETIMEDOUT 10.0.0.1:443' },
      'network timeout',
    ],
    [
      'a nonzero exit with no cause',
      { exitCode: 1, detail: 'exit code 1\nSegmentation fault' },
      'crash (exit code 1)',
    ],
    [
      'killed by a signal',
      { exitCode: null, detail: 'killed by SIGKILL' },
      'crash (killed by a signal)',
    ],
    [
      'our own timeout: it took too long',
      { exitCode: null, timedOut: true, detail: 'timed out after 60m' },
      null,
    ],
    ['the agent at its turn cap', { exitCode: 1, capped: true, detail: 'error_max_turns' }, null],
    ['a failed turn that exited 0', { exitCode: 0, detail: 'turn failed' }, null],
    ['a failed turn whose exit is not known', { detail: 'exit 2' }, null],
    ['a missing CLI', { exitCode: null, missingBinary: true, detail: 'not installed' }, null],
    ['a usage limit', { outcome: 'usage-limit', exitCode: 1, detail: '503' }, null],
    ['a rate limit', { outcome: 'rate-limited', exitCode: 1 }, null],
    ['bad credentials', { outcome: 'auth', exitCode: 1 }, null],
    ['an ok turn', { outcome: 'ok', exitCode: 0 }, null],
  ])('%s', (_name, over, label) => {
    expect(transientFault(end(over))?.label ?? null).toBe(label);
  });
});

describe('the backoff', () => {
  it('doubles from the configured wait, and never passes 2 minutes unless the first wait does', () => {
    const rules = { transient: 10, backoffMs: 2000 };
    expect([1, 2, 3, 4].map((n) => backoffMs(rules, n))).toEqual([2000, 4000, 8000, 16000]);
    expect(backoffMs(rules, 10)).toBe(120_000);
    expect(backoffMs({ transient: 3, backoffMs: 300_000 }, 3)).toBe(300_000);
  });

  it('is told in seconds, milliseconds below one, minutes above sixty', () => {
    expect([250, 2000, 60_000, 64_000].map(formatWait)).toEqual([
      '250 ms',
      '2 s',
      '1 min',
      '1 min 4 s',
    ]);
  });

  it('names each retry with its number and the budget, and ends with the budget', () => {
    const rules = { transient: 2, backoffMs: 2000 };
    const fault = { kind: 'outage', label: 'outage (HTTP 503)' } as const;
    expect(retryTransient(rules, 0, fault, 'coder turn 1')).toEqual({
      used: 1,
      waitMs: 2000,
      message: 'coder turn 1: outage (HTTP 503), retry 1 of 2 in 2 s',
    });
    expect(retryTransient(rules, 1, fault, 'judge turn 4')?.message).toBe(
      'judge turn 4: outage (HTTP 503), retry 2 of 2 in 4 s',
    );
    expect(retryTransient(rules, 2, fault, 'coder turn 5')).toBeNull();
    expect(retryTransient({ transient: 0, backoffMs: 2000 }, 0, fault, 'coder turn 1')).toBeNull();
    expect([0, 1, 3].map(afterRetries)).toEqual(['', ' after 1 retry', ' after 3 retries']);
  });
});

const alpha: ExecutorConfig = {
  id: 'alpha',
  harness: 'command',
  args: [],
  slots: 1,
  priority: 100,
  roles: ['coder'],
  env: {},
};
const rules: RoundRules = {
  fixRounds: 2,
  judgeRounds: 1,
  verifier: false,
  retries: { transient: 2, backoffMs: 2000 },
};
const turn = (over: Partial<TurnFacts>): TurnFacts => ({
  interrupted: false,
  outcome: 'failed',
  missingBinary: false,
  detail: 'exit code 1\nboom',
  exitCode: 1,
  ...over,
});

describe('a coder turn that ended on a transient fault', () => {
  it('runs again with the same feedback after the backoff, said and noted, until the budget is spent; then the story fails', () => {
    let d = startRounds(rules, alpha, ['alpha']);
    d = decideAfterTurn(
      d.state,
      turn({ round: 1, outcome: 'outage', detail: '503 Service Unavailable' }),
    );
    expect(d.next).toEqual({ kind: 'code', feedback: undefined, waitMs: 2000 });
    const first = 'coder turn 1: outage (HTTP 503), retry 1 of 2 in 2 s';
    expect(d.effects).toEqual([
      { kind: 'say', message: first },
      { kind: 'note', notes: [first] },
    ]);
    expect(d.state.transientRetries).toBe(1);
    d = decideAfterTurn(d.state, turn({ round: 2 }));
    expect(d.next).toEqual({ kind: 'code', feedback: undefined, waitMs: 4000 });
    expect(d.effects[0]).toEqual({
      kind: 'say',
      message: 'coder turn 2: crash (exit code 1), retry 2 of 2 in 4 s',
    });
    d = decideAfterTurn(d.state, turn({ round: 3 }));
    expect(d.next).toEqual({
      kind: 'stop',
      status: 'failed',
      reason: 'coder turn failed (alpha) after 2 retries: exit code 1 | boom',
    });
  });

  it('with retries.transient 0, a crash fails the story at once, with no wait and no word of retries', () => {
    const none = { ...rules, retries: { transient: 0, backoffMs: 2000 } };
    const d = decideAfterTurn(startRounds(none, alpha, ['alpha']).state, turn({ round: 1 }));
    expect(d.next).toEqual({
      kind: 'stop',
      status: 'failed',
      reason: 'coder turn failed (alpha): exit code 1 | boom',
    });
    expect(d.effects).toEqual([]);
  });

  it('an outage once the budget is spent goes to the roster, as without retries', () => {
    const spent = { ...startRounds(rules, alpha, ['alpha']).state, transientRetries: 2 };
    const d = decideAfterTurn(spent, turn({ outcome: 'outage', detail: 'overloaded' }));
    expect(d.next).toEqual({
      kind: 'exclude',
      executor: 'alpha',
      signal: { kind: 'signal', outcome: 'outage', resetAt: undefined, detail: 'overloaded' },
    });
  });

  it('a failure that is not transient fails at once, with no word of retries', () => {
    const d = decideAfterTurn(
      startRounds(rules, alpha, ['alpha']).state,
      turn({ exitCode: 1, capped: true, detail: 'error_max_turns' }),
    );
    expect(d.next).toEqual({
      kind: 'stop',
      status: 'failed',
      reason: 'coder turn failed (alpha): error_max_turns',
    });
  });

  it('what a judge call spent counts against the same budget', () => {
    const judging = {
      ...startRounds(rules, alpha, ['alpha']).state,
      awaiting: { step: 'judge', inPlace: false } as const,
      checked: 'c'.repeat(40),
    };
    const d = decideAfterJudge(judging, {
      kind: 'unavailable',
      why: 'j crashed',
      transientRetries: 2,
    });
    expect(d.state.transientRetries).toBe(2);
  });
});

describe('a judge or verifier turn that ended on a transient fault', () => {
  const stopped = (over: Partial<Extract<HelperFacts<unknown>, { kind: 'stopped' }>>) =>
    ({
      kind: 'stopped',
      executor: 'j1',
      round: 3,
      interrupted: false,
      outcome: 'failed',
      missingBinary: false,
      detail: 'killed by SIGSEGV',
      exitCode: null,
      ...over,
    }) as const;

  it('asks again after the backoff while the story has retries, then gives up as without them', () => {
    let d = startHelperCall<unknown>('judge', {
      retries: { transient: 2, backoffMs: 500 },
      transientRetries: 1,
    });
    d = decideAfterHelperTurn(d.call, stopped({}));
    expect(d.next).toEqual({ kind: 'ask', repairError: undefined });
    expect(d.waitMs).toBe(1000);
    const said = 'judge turn 3: crash (killed by a signal), retry 2 of 2 in 1 s';
    expect(d.effects).toEqual([
      { kind: 'say', message: said },
      { kind: 'note', notes: [said] },
    ]);
    expect(d.call).toMatchObject({ transientRetries: 2, attempts: 0 });
    d = decideAfterHelperTurn(d.call, stopped({ round: 4 }));
    expect(d.next).toEqual({
      kind: 'unavailable',
      why: 'j1 failed after 2 retries: killed by SIGSEGV',
    });
    expect(d.call.transientRetries).toBe(2);
  });

  it('an outage with retries left is asked again of the role, not reported to the roster', () => {
    const d = decideAfterHelperTurn(
      startHelperCall<unknown>('verifier', {
        retries: { transient: 3, backoffMs: 2000 },
        transientRetries: 0,
      }).call,
      stopped({ outcome: 'outage', detail: '502 Bad Gateway', exitCode: 1 }),
    );
    expect(d.next).toEqual({ kind: 'ask', repairError: undefined });
    expect(d.effects[0]).toEqual({
      kind: 'say',
      message: 'verifier turn 3: outage (HTTP 502), retry 1 of 3 in 2 s',
    });
  });
});
