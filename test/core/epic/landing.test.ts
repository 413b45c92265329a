import { describe, expect, it } from '@jest/globals';
import {
  decideLanding,
  isLandJob,
  landHalt,
  landRunEnded,
  prClosedHalt,
  type LandingInput,
} from '../../../src/core/epic/landing.js';
import { readLandLog, type LandLog } from '../../../src/core/land/index.js';
import { parsePlan } from '../../../src/core/plan/index.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const E = 'e'.repeat(40);
const empty: LandLog = { version: 1, lands: [] };

function input(over: Partial<LandingInput> = {}): LandingInput {
  return {
    log: empty,
    epicBranch: 'epic/7',
    into: 'main',
    intoHead: A,
    epicHead: E,
    prOpen: true,
    landed: false,
    halt: undefined,
    now: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

describe('decideLanding', () => {
  it('starts land-1 on a new head of the default branch, recording it running', () => {
    const d = decideLanding(input());
    expect(d.kind).toBe('start');
    if (d.kind !== 'start') return;
    expect(d.record).toMatchObject({
      job: 'land-1',
      outcome: 'running',
      into: 'main',
      intoHeadBefore: A,
      epicHeadBefore: E,
    });
    // What it writes reads back as a landing log.
    expect(readLandLog(JSON.parse(JSON.stringify(d.log)), 'land.json').lands).toHaveLength(1);
  });

  it('decides nothing twice for the same head (a redelivered push)', () => {
    const first = decideLanding(input());
    if (first.kind !== 'start') throw new Error('expected a start');
    expect(decideLanding(input({ log: first.log })).kind).toBe('none');
    const done = {
      ...first.log,
      lands: [{ ...first.record, outcome: 'landed' as const }],
    };
    expect(decideLanding(input({ log: done })).kind).toBe('none');
  });

  it('queues a push while a landing runs, once, and starts a new head after it', () => {
    const first = decideLanding(input());
    if (first.kind !== 'start') throw new Error('expected a start');
    const queued = decideLanding(input({ log: first.log, intoHead: B }));
    expect(queued.kind).toBe('queue');
    if (queued.kind !== 'queue') return;
    expect(queued.log.pending).toMatchObject({ into: 'main', intoHead: B });
    // The same push again: already queued.
    expect(decideLanding(input({ log: queued.log, intoHead: B })).kind).toBe('none');
    // land-1 done: the queued head starts as land-2, and the queue empties.
    const after = { ...queued.log, lands: [{ ...first.record, outcome: 'landed' as const }] };
    const next = decideLanding(input({ log: after, intoHead: B }));
    expect(next.kind).toBe('start');
    if (next.kind !== 'start') return;
    expect(next.record.job).toBe('land-2');
    expect(next.log.pending).toBeUndefined();
  });

  it.each([
    ['landed', { landed: true }],
    ['no pull request', { prOpen: false }],
    ['no epic branch', { epicHead: null }],
    ['held by a failed landing', { halt: { kind: 'land-failed' as const, message: 'x' } }],
    ['cancelled', { halt: { kind: 'cancel' as const, message: 'x' } }],
    ['its pull request closed', { halt: prClosedHalt(3) }],
  ])('starts nothing when %s', (_name, over) => {
    expect(decideLanding(input(over)).kind).toBe('none');
  });
});

describe('landRunEnded', () => {
  it('marks a landing its job did not finish as not landed, once', () => {
    const first = decideLanding(input());
    if (first.kind !== 'start') throw new Error('expected a start');
    const ended = landRunEnded(first.log, 'land-1', 'cancelled', '2026-01-01T01:00:00.000Z');
    expect(ended.died?.outcome).toBe('not-landed');
    expect(ended.died?.reason).toContain('cancelled');
    expect(ended.log?.lands[0]?.outcome).toBe('not-landed');
    if (ended.log === undefined) return;
    expect(landRunEnded(ended.log, 'land-1', 'cancelled', 'later').log).toBeUndefined();
  });
});

describe('the halts', () => {
  it('a failed landing names the paths and the way out', () => {
    const first = decideLanding(input());
    if (first.kind !== 'start') throw new Error('expected a start');
    const halt = landHalt({ ...first.record, conflicts: ['src/a.js', 'README.md'] });
    expect(halt.kind).toBe('land-failed');
    expect(halt.message).toContain('src/a.js, README.md');
    expect(halt.nextStep).toContain('`src/a.js`, `README.md`');
    expect(halt.nextStep).toContain('`/resume`');
  });
});

describe('land job ids', () => {
  it('are land-<n>, and no story of a plan may be called so', () => {
    expect(isLandJob('land-3')).toBe(true);
    expect(isLandJob('land-0')).toBe(false);
    expect(isLandJob('landing')).toBe(false);
    const parsed = parsePlan(
      '```epicflow\nstories:\n  - id: land-1\n    title: T\n    description: D\n    owns: [src/x]\n```\n',
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.violations.map((v) => v.message).join('\n')).toContain('reserved');
  });
});

describe('the way out of a failed landing', () => {
  it('asks for the trailer that keeps the stories below a hand-made merge counted', () => {
    const first = decideLanding(input());
    if (first.kind !== 'start') throw new Error('expected a start');
    const halt = landHalt({ ...first.record, conflicts: ['a.js'] });
    expect(halt.nextStep).toBe(
      'Resolve `a.js` by hand: merge main into epic/7, fix the conflicts, commit the merge with the trailer `Epicflow-Land: main`, push, then comment `/resume`.',
    );
  });
});
