import { describe, expect, it } from '@jest/globals';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import {
  activeExclusion,
  emptyRosterState,
  freeCoderSlots,
  leaseCoder,
  nextCapacityChange,
  pauseExecutor,
  persistableRosterState,
  pickHelper,
  recordMissingBinary,
  recordSignal,
  releaseLease,
  restoreRosterState,
  resumeExecutor,
  rosterExhausted,
  syncPauses,
} from '../../../src/core/roster/index.js';
import { renderRoster } from '../../../src/core/roster/render.js';

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

describe('exclusion expiry and capacity changes (fake clock)', () => {
  it('three rate limits within ten minutes exclude for ten minutes; capacity returns when it expires', () => {
    const roster = [exec('a'), exec('b')];
    let s = emptyRosterState();
    for (const min of [0, 4]) {
      const r = recordSignal(s, { executor: 'a', outcome: 'rate-limited', now: at(min) });
      expect(r.exclusion).toBeNull();
      s = r.state;
    }
    // Two rate limits more than ten minutes apart from the third do not count.
    const late = recordSignal(s, { executor: 'a', outcome: 'rate-limited', now: at(11) });
    expect(late.exclusion).toBeNull();
    const third = recordSignal(late.state, { executor: 'a', outcome: 'rate-limited', now: at(12) });
    expect(third.exclusion).toMatchObject({ kind: 'rate-limited', until: at(22).toISOString() });
    s = third.state;
    expect(freeCoderSlots(roster, s, at(12))).toBe(1);
    expect(nextCapacityChange(s, at(12))).toEqual(at(22));
    expect(activeExclusion(s, 'a', at(21.9))).not.toBeNull();
    expect(activeExclusion(s, 'a', at(22))).toBeNull();
    expect(freeCoderSlots(roster, s, at(22))).toBe(2);
    expect(nextCapacityChange(s, at(22))).toBeNull();
  });

  it('a released lease frees its slot; ties go to the least recently leased', () => {
    const roster = [exec('x'), exec('y'), exec('z', { priority: 1 })];
    let s = emptyRosterState();
    s = leaseCoder(roster, s, { story: 's1', now: at(0) }).state; // z (priority)
    s = leaseCoder(roster, s, { story: 's2', now: at(1) }).state; // x (config order)
    expect(s.leases).toEqual({ s1: 'z', s2: 'x' });
    s = releaseLease(releaseLease(s, 's1'), 's2');
    s = leaseCoder(roster, s, { story: 's3', now: at(2) }).state; // z again
    expect(s.leases.s3).toBe('z');
    const r = leaseCoder(roster, s, { story: 's4', now: at(3) });
    expect(r.executor?.id).toBe('y'); // never leased beats x (leased at 1)
    expect(freeCoderSlots(roster, r.state, at(3))).toBe(1);
    expect(freeCoderSlots(roster, releaseLease(r.state, 's3'), at(3))).toBe(2);
  });
});

describe('missing binaries and pauses', () => {
  it('a missing binary is out for the run with the install hint; a rerun tries again', () => {
    const roster = [exec('codex', { harness: 'codex' })];
    const r = recordMissingBinary(emptyRosterState(), {
      executor: 'codex',
      detail: 'codex is not installed: npm install -g @openai/codex\nmore',
      now: t0,
    });
    expect(r.exclusion).toEqual({
      kind: 'missing-binary',
      reason: 'codex is not installed: npm install -g @openai/codex',
      since: t0.toISOString(),
      until: null,
    });
    expect(rosterExhausted(roster, r.state, at(600))?.message).toBe(
      'roster exhausted: codex (codex is not installed: npm install -g @openai/codex; out for this run)',
    );
    const restored = restoreRosterState(
      JSON.parse(JSON.stringify(persistableRosterState(r.state))),
    );
    expect(restored?.exclusions).toEqual({});
  });

  it('a pause lasts across runs until resumed, and pauses on disk win over the run’s memory', () => {
    const roster = [exec('a'), exec('b')];
    const paused = pauseExecutor(emptyRosterState(), 'a', t0);
    expect(activeExclusion(paused, 'a', at(10_000))).toMatchObject({
      kind: 'paused',
      reason: 'paused by user',
    });
    const restored = restoreRosterState(JSON.parse(JSON.stringify(persistableRosterState(paused))));
    expect(restored?.exclusions.a?.kind).toBe('paused');
    expect(leaseCoder(roster, paused, { story: 's', now: t0 }).executor?.id).toBe('b');
    expect(activeExclusion(resumeExecutor(paused, 'a'), 'a', t0)).toBeNull();

    // A run holding an outage for b in memory learns of a pause of a written meanwhile…
    const inMemory = recordSignal(emptyRosterState(), {
      executor: 'b',
      outcome: 'outage',
      now: t0,
    }).state;
    const synced = syncPauses(inMemory, paused);
    expect(Object.keys(synced.exclusions).sort()).toEqual(['a', 'b']);
    // …and of its resume.
    expect(Object.keys(syncPauses(synced, emptyRosterState()).exclusions)).toEqual(['b']);
  });
});

describe('judge and verifier picks', () => {
  const roster = [
    exec('coder', { roles: ['coder', 'judge'], priority: 1 }),
    exec('j1', { roles: ['judge'], priority: 5 }),
    exec('j2', { roles: ['judge'], priority: 3 }),
    exec('v', { roles: ['verifier'] }),
  ];

  it("avoids the story's coders, preferring the configured judge, else the lowest priority", () => {
    const s = emptyRosterState();
    const pick = (preferred?: string, avoid = ['coder']) =>
      pickHelper(roster, s, { role: 'judge', preferred, avoid, now: t0 });
    expect(pick('coder')).toMatchObject({ executor: { id: 'j2' }, independent: true });
    expect(pick('j1')).toMatchObject({ executor: { id: 'j1' }, independent: true });
    expect(pick(undefined, [])).toMatchObject({ executor: { id: 'coder' }, independent: true });
    expect(
      pickHelper(roster, s, { role: 'verifier', avoid: ['coder'], now: t0 })?.executor.id,
    ).toBe('v');
  });

  it('falls back to the coder itself (not independent), skipping excluded judges', () => {
    let s = recordSignal(emptyRosterState(), { executor: 'j1', outcome: 'auth', now: t0 }).state;
    s = recordSignal(s, { executor: 'j2', outcome: 'outage', now: t0 }).state;
    expect(pickHelper(roster, s, { role: 'judge', avoid: ['coder'], now: t0 })).toMatchObject({
      executor: { id: 'coder' },
      independent: false,
    });
    // The outage of j2 ends after five minutes.
    expect(
      pickHelper(roster, s, { role: 'judge', avoid: ['coder'], now: at(5) })?.executor.id,
    ).toBe('j2');
    expect(pickHelper([exec('a')], s, { role: 'verifier', avoid: [], now: t0 })).toBeNull();
  });
});

describe('renderRoster', () => {
  it('shows busy seats and each exclusion with its return time', () => {
    const roster = [exec('a', { slots: 2, model: 'm1' }), exec('b', { priority: 300 })];
    let s = leaseCoder(roster, emptyRosterState(), { story: 's', now: t0 }).state;
    s = recordSignal(s, { executor: 'b', outcome: 'usage-limit', now: t0 }).state;
    expect(renderRoster(roster, s, t0)).toBe(
      [
        'executor  harness  model  roles  slots  priority  status',
        'a         command  m1     coder  1/2    100       available',
        'b         command  -      coder  0/1    300       usage limit reached (back at 2026-01-01 10:30 UTC)',
        '',
      ].join('\n'),
    );
  });
});
