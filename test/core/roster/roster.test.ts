import { describe, expect, it } from '@jest/globals';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import {
  emptyRosterState,
  freeCoderSlots,
  leaseCoder,
  nextExecutor,
  persistableRosterState,
  recordSignal,
  releaseLease,
  restoreRosterState,
  rosterExhausted,
} from '../../../src/core/roster/index.js';

const exec = (id: string, extra: Partial<ExecutorConfig> = {}): ExecutorConfig => ({
  id,
  harness: 'command',
  command: ['true'],
  args: [],
  slots: 1,
  priority: 100,
  roles: ['coder'],
  env: {},
  ...extra,
});

const t0 = new Date('2026-01-01T10:00:00Z');
const at = (min: number): Date => new Date(t0.getTime() + min * 60_000);

describe('leasing', () => {
  const roster = [
    exec('a', { priority: 2, slots: 2 }),
    exec('b', { priority: 1 }),
    exec('judge', { roles: ['judge'] }),
  ];

  it('takes the preferred executor if free, else the lowest priority, ties to least recently used', () => {
    let s = emptyRosterState();
    const r1 = leaseCoder(roster, s, { story: 's1', preferred: 'a', now: t0 });
    expect(r1.executor?.id).toBe('a');
    s = r1.state;
    const r2 = leaseCoder(roster, s, { story: 's2', now: t0 });
    expect(r2.executor?.id).toBe('b');
    s = r2.state;
    const r3 = leaseCoder(roster, s, { story: 's3', preferred: 'b', now: t0 });
    expect(r3.executor?.id).toBe('a');
    s = r3.state;
    expect(freeCoderSlots(roster, s, t0)).toBe(0);
    expect(leaseCoder(roster, s, { story: 's4', now: t0 }).executor).toBeNull();
    // A story keeps its lease.
    expect(leaseCoder(roster, s, { story: 's1', now: t0 }).executor?.id).toBe('a');
    s = releaseLease(s, 's2');
    expect(freeCoderSlots(roster, s, t0)).toBe(1);
  });

  it('breaks priority ties by least recent use', () => {
    const same = [exec('x'), exec('y')];
    let s = leaseCoder(same, emptyRosterState(), { story: 's1', now: t0 }).state;
    s = releaseLease(s, 's1');
    expect(leaseCoder(same, s, { story: 's2', now: at(1) }).executor?.id).toBe('y');
  });
});

describe('exclusions', () => {
  it('usage limit: until the reset time, else 30 minutes', () => {
    const roster = [exec('a')];
    let { state, exclusion } = recordSignal(emptyRosterState(), {
      executor: 'a',
      outcome: 'usage-limit',
      resetAt: '2026-01-01T12:00:00Z',
      now: t0,
    });
    expect(exclusion?.until).toBe('2026-01-01T12:00:00.000Z');
    expect(freeCoderSlots(roster, state, at(119))).toBe(0);
    expect(freeCoderSlots(roster, state, at(120))).toBe(1);
    ({ state, exclusion } = recordSignal(emptyRosterState(), {
      executor: 'a',
      outcome: 'usage-limit',
      now: t0,
    }));
    expect(exclusion?.until).toBe(at(30).toISOString());
  });

  it('three rate limits in ten minutes exclude for ten minutes', () => {
    let s = emptyRosterState();
    let ex = null;
    for (const m of [0, 4, 11, 15]) {
      ({ state: s, exclusion: ex } = recordSignal(s, {
        executor: 'a',
        outcome: 'rate-limited',
        now: at(m),
      }));
      expect(ex).toBeNull();
    }
    ({ state: s, exclusion: ex } = recordSignal(s, {
      executor: 'a',
      outcome: 'rate-limited',
      now: at(16),
    }));
    expect(ex?.until).toBe(at(26).toISOString());
  });

  it('outage: five minutes; auth: for the run only; failed work never excludes', () => {
    let s = recordSignal(emptyRosterState(), { executor: 'a', outcome: 'outage', now: t0 }).state;
    expect(s.exclusions.a?.until).toBe(at(5).toISOString());
    s = recordSignal(s, { executor: 'b', outcome: 'auth', now: t0, detail: 'bad key\nmore' }).state;
    expect(s.exclusions.b).toEqual({
      kind: 'auth',
      reason: 'authentication failed: bad key',
      since: t0.toISOString(),
      until: null,
    });
    expect(recordSignal(s, { executor: 'c', outcome: 'failed', now: t0 }).state).toBe(s);
    const restored = restoreRosterState(JSON.parse(JSON.stringify(persistableRosterState(s))));
    expect(restored?.exclusions.a).toEqual(s.exclusions.a);
    expect(restored?.exclusions.b).toBeUndefined();
    expect(restoreRosterState({ nope: 1 })).toBeNull();
  });
});

describe('handover and exhaustion', () => {
  it('hands over to the next executor not yet tried and not excluded', () => {
    const roster = [
      exec('a', { priority: 1 }),
      exec('b', { priority: 2 }),
      exec('c', { priority: 3 }),
    ];
    let s = leaseCoder(roster, emptyRosterState(), { story: 's', now: t0 }).state;
    s = recordSignal(s, { executor: 'a', outcome: 'usage-limit', now: t0 }).state;
    const r = nextExecutor(roster, s, { story: 's', excluding: ['a'], now: t0 });
    expect(r.executor?.id).toBe('b');
    expect(r.state.leases).toEqual({ s: 'b' });
    expect(
      nextExecutor(roster, r.state, { story: 's', excluding: ['a', 'b', 'c'], now: t0 }).executor,
    ).toBeNull();
  });

  it('names each executor, its reason and return time when exhausted', () => {
    const roster = [exec('a'), exec('b')];
    let s = recordSignal(emptyRosterState(), {
      executor: 'a',
      outcome: 'usage-limit',
      now: t0,
      resetAt: '2026-01-01T14:00:00Z',
    }).state;
    expect(rosterExhausted(roster, s, t0)).toBeNull();
    s = recordSignal(s, { executor: 'b', outcome: 'auth', now: t0 }).state;
    expect(rosterExhausted(roster, s, t0)).toEqual({
      message:
        'roster exhausted: a (usage limit reached; back at 2026-01-01 14:00 UTC), b (authentication failed; out for this run)',
      until: '2026-01-01T14:00:00.000Z',
    });
    expect(rosterExhausted([exec('j', { roles: ['judge'] })], s, t0)?.message).toBe(
      'roster exhausted: no executor has the coder role',
    );
  });
});
