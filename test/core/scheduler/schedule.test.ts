import { describe, expect, it } from '@jest/globals';
import { EpicflowError } from '../../../src/core/errors.js';
import type { StoryStatus } from '../../../src/core/model.js';
import {
  LaunchSummary,
  nextSummary,
  remainingChainLengths,
  schedule,
} from '../../../src/core/scheduler/index.js';
import type { SchedulerInput } from '../../../src/core/scheduler/index.js';
import { story } from './helpers.js';

const budgetHalt = { kind: 'budget', message: 'budget of $50.00 spent ($51.20)' } as const;

function decide(
  stories: SchedulerInput['stories'],
  status: Record<string, StoryStatus>,
  more: Partial<SchedulerInput> = {},
) {
  return schedule({ stories, status, concurrency: 4, freeCoderSlots: Infinity, ...more });
}

describe('remainingChainLengths', () => {
  it('counts the longest chain of dependents below each story, itself included', () => {
    const stories = [
      story('a'),
      story('b', ['a']),
      story('c', ['b']),
      story('d', ['a']),
      story('e'),
      story('f', ['c', 'd', 'e']),
    ];
    expect(remainingChainLengths(stories)).toEqual({ a: 4, b: 3, c: 2, d: 2, e: 2, f: 1 });
  });

  it('gives 1 to a lone story and nothing for an empty plan', () => {
    expect(remainingChainLengths([story('solo')])).toEqual({ solo: 1 });
    expect(remainingChainLengths([])).toEqual({});
  });
});

describe('schedule: what starts', () => {
  it.each([
    {
      name: 'the longest remaining chain starts first',
      stories: [story('docs'), story('api'), story('ui', ['api']), story('e2e', ['ui'])],
      status: {},
      concurrency: 1,
      start: ['api'],
    },
    {
      name: 'stories with equal chains start in plan order',
      stories: [story('p'), story('q'), story('r'), story('s')],
      status: {},
      concurrency: 2,
      start: ['p', 'q'],
    },
    {
      name: 'the start list is best first, ties in plan order',
      stories: [story('x'), story('y'), story('a'), story('b', ['a']), story('c', ['y'])],
      status: {},
      concurrency: 4,
      start: ['y', 'a', 'x'],
    },
    {
      name: 'a ready story of the next wave starts while its wave is still running',
      stories: [story('a'), story('b'), story('c', ['a']), story('d', ['b'])],
      status: { a: 'done', b: 'active' },
      concurrency: 4,
      start: ['c'],
    },
    {
      name: 'a story waits until every dependency is done',
      stories: [story('a'), story('b'), story('c', ['a', 'b'])],
      status: { a: 'done', b: 'active' },
      concurrency: 4,
      start: [],
    },
    {
      name: 'a missing status counts as planned',
      stories: [story('a'), story('b', ['a'])],
      status: {},
      concurrency: 4,
      start: ['a'],
    },
  ] as const)('$name', ({ stories, status, concurrency, start }) => {
    expect(decide(stories, status, { concurrency }).start).toEqual(start);
  });

  it('caps launches by concurrency and by free coder slots, whichever is smaller', () => {
    const stories = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => story(id));
    const status = { a: 'active' } as const;
    expect(decide(stories, status, { concurrency: 4, freeCoderSlots: 2 }).start).toEqual([
      'b',
      'c',
    ]);
    expect(decide(stories, status, { concurrency: 2, freeCoderSlots: 5 }).start).toEqual(['b']);
    expect(decide(stories, status, { concurrency: 3, freeCoderSlots: Infinity }).start).toEqual([
      'b',
      'c',
    ]);
    expect(decide(stories, status, { concurrency: 4, freeCoderSlots: 0 }).start).toEqual([]);
  });

  it('starts one story when none run, even with no free coder slot', () => {
    const stories = [story('a'), story('b'), story('c', ['b'])];
    const d = decide(stories, {}, { freeCoderSlots: 0 });
    expect(d.start).toEqual(['b']);
    expect(d.finished).toBe(false);
    expect(d.summary).toBe(
      'running 1 of 4 allowed: 1 ready, no coder slot free, 1 waiting on dependencies (c ← b)',
    );
  });

  it('never starts an active, done or failed story again', () => {
    const stories = [story('a'), story('b'), story('c')];
    expect(decide(stories, { a: 'active', b: 'done', c: 'failed' }).start).toEqual([]);
  });

  it('handles story ids that are also names of object properties', () => {
    const stories = [story('constructor'), story('to-string', ['constructor'])];
    expect(decide(stories, {}).start).toEqual(['constructor']);
  });
});

describe('schedule: failures hold their dependents', () => {
  it('holds every transitive dependent with the failed story named', () => {
    const stories = [
      story('api'),
      story('client', ['api']),
      story('ui', ['client']),
      story('docs'),
      story('e2e', ['ui', 'docs']),
    ];
    const d = decide(stories, { api: 'failed', docs: 'done' });
    expect(d.start).toEqual([]);
    expect(d.hold).toEqual([
      { id: 'client', reason: 'waiting for api' },
      { id: 'ui', reason: 'waiting for api' },
      { id: 'e2e', reason: 'waiting for api' },
    ]);
    expect(d.finished).toBe(true);
    expect(d.summary).toBe(
      'all stories settled: 1 done, 1 failed, 3 waiting for a failed dependency',
    );
  });

  it('names the nearest failed ancestor', () => {
    const stories = [story('a'), story('b', ['a']), story('c', ['b']), story('d', ['c'])];
    const d = decide(stories, { a: 'failed', b: 'failed' });
    expect(d.hold).toEqual([
      { id: 'c', reason: 'waiting for b' },
      { id: 'd', reason: 'waiting for b' },
    ]);
  });

  it('names the first in plan order when several failed ancestors are equally near', () => {
    const stories = [story('x'), story('y'), story('z', ['y', 'x'])];
    expect(decide(stories, { x: 'failed', y: 'failed' }).hold).toEqual([
      { id: 'z', reason: 'waiting for x' },
    ]);
  });

  it('lets independent stories continue', () => {
    const stories = [story('a'), story('b', ['a']), story('c'), story('d', ['c'])];
    const d = decide(stories, { a: 'failed', c: 'done' });
    expect(d.start).toEqual(['d']);
    expect(d.hold).toEqual([{ id: 'b', reason: 'waiting for a' }]);
    expect(d.finished).toBe(false);
    expect(d.summary).toBe('running 1 of 4 allowed: 1 waiting for a failed dependency');
  });

  it('does not hold stories behind a failure that a merged story already covers', () => {
    // On resume a changed story may fail again after its dependent was merged.
    const stories = [story('a'), story('b', ['a']), story('c', ['b'])];
    const d = decide(stories, { a: 'failed', b: 'done' });
    expect(d.hold).toEqual([]);
    expect(d.start).toEqual(['c']);
  });

  it('with fail-fast, a failure stops all launches', () => {
    const stories = [story('a'), story('b', ['a']), story('c'), story('d')];
    const d = decide(stories, { a: 'failed', c: 'active' }, { failFast: true });
    expect(d.start).toEqual([]);
    expect(d.hold).toEqual([
      { id: 'b', reason: 'waiting for a' },
      { id: 'd', reason: 'not started: story a failed (fail-fast)' },
    ]);
    expect(d.finished).toBe(false);
    expect(d.summary).toBe('halted: story a failed (fail-fast) (1 still running)');
  });
});

describe('schedule: halts', () => {
  const stories = [
    story('a'),
    story('b'),
    story('c', ['a']),
    story('d', ['x']),
    story('x'),
    story('e'),
  ];

  it('starts nothing and marks every unstarted story not started with the halt message', () => {
    const d = decide(stories, { a: 'active', b: 'done', x: 'failed' }, { halt: budgetHalt });
    expect(d.start).toEqual([]);
    expect(d.hold).toEqual([
      { id: 'c', reason: 'not started: budget of $50.00 spent ($51.20)' },
      { id: 'd', reason: 'waiting for x' },
      { id: 'e', reason: 'not started: budget of $50.00 spent ($51.20)' },
    ]);
    expect(d.finished).toBe(false);
    expect(d.summary).toBe('halted: budget of $50.00 spent ($51.20) (1 still running)');
  });

  it('is finished once the running stories are done', () => {
    const d = decide(stories, { a: 'done', b: 'done', x: 'failed' }, { halt: budgetHalt });
    expect(d.start).toEqual([]);
    expect(d.finished).toBe(true);
    expect(d.summary).toBe('halted: budget of $50.00 spent ($51.20)');
  });

  it('releases waiting stories once the halt is lifted', () => {
    const waiting = { c: 'waiting', d: 'waiting', e: 'waiting' } as const;
    const d = decide(
      stories,
      { a: 'done', b: 'done', x: 'done', ...waiting },
      { concurrency: 1, freeCoderSlots: 1 },
    );
    expect(d.start).toEqual(['c']);
    expect(d.hold).toEqual([]);
    expect(d.release).toEqual(['d', 'e']);
  });

  it('keeps re-holding a waiting story while its failed dependency stays failed', () => {
    const d = decide([story('a'), story('b', ['a'])], { a: 'failed', b: 'waiting' });
    expect(d.hold).toEqual([{ id: 'b', reason: 'waiting for a' }]);
    expect(d.release).toEqual([]);
  });
});

describe('schedule: finished', () => {
  it.each([
    { status: { a: 'done', b: 'done', c: 'done' }, finished: true },
    { status: { a: 'done', b: 'done', c: 'active' }, finished: false },
    { status: { a: 'done', b: 'done' }, finished: false },
    { status: { a: 'failed', b: 'done' }, finished: true },
    { status: { a: 'done', b: 'failed' }, finished: false },
  ] as const)('$status → finished $finished', ({ status, finished }) => {
    const stories = [story('a'), story('b'), story('c', ['a'])];
    expect(decide(stories, status).finished).toBe(finished);
  });

  it('reports an empty plan as settled', () => {
    expect(decide([], {})).toEqual({
      start: [],
      hold: [],
      release: [],
      summary: 'all stories settled: 0 done',
      finished: true,
    });
  });
});

describe('schedule: launch summary', () => {
  const stories = [
    story('a'),
    story('b'),
    story('c'),
    story('d', ['a']),
    story('e', ['d']),
    story('f', ['b']),
  ];

  it.each([
    {
      name: 'fewer ready than allowed',
      status: {},
      more: { concurrency: 4 },
      summary: 'running 3 of 4 allowed: 3 waiting on dependencies (d ← a; e ← d; f ← b)',
    },
    {
      name: 'coder slots are the limit',
      status: { a: 'active' },
      more: { concurrency: 4, freeCoderSlots: 0 },
      summary:
        'running 1 of 4 allowed: 2 ready, coder slots full (1 of 1 busy), 3 waiting on dependencies (d ← a; e ← d; f ← b)',
    },
    {
      name: 'concurrency is the limit',
      status: {},
      more: { concurrency: 2 },
      summary:
        'running 2 of 2 allowed: 1 ready, at the concurrency limit, 3 waiting on dependencies (d ← a; e ← d; f ← b)',
    },
    {
      name: 'everything left is running',
      status: { a: 'done', b: 'done', c: 'done', d: 'done', f: 'done' },
      more: { concurrency: 4 },
      summary: 'running 1 of 4 allowed: no other story left to start',
    },
    {
      name: 'all merged',
      status: { a: 'done', b: 'done', c: 'done', d: 'done', e: 'done', f: 'done' },
      more: {},
      summary: 'all stories settled: 6 done',
    },
    {
      name: 'halted with nothing running',
      status: {},
      more: { halt: { kind: 'cancel', message: 'cancelled by /cancel' } as const },
      summary: 'halted: cancelled by /cancel',
    },
  ] as const)('$name', ({ status, more, summary }) => {
    expect(decide(stories, status, more).summary).toBe(summary);
  });

  it('names at most three blocked stories, each with what it still waits on', () => {
    const many = [
      story('a'),
      story('b'),
      story('c', ['a', 'b']),
      story('d', ['c']),
      story('e', ['a']),
      story('f', ['e']),
      story('g', ['f']),
    ];
    expect(decide(many, { a: 'done' }, { concurrency: 4 }).summary).toBe(
      'running 2 of 4 allowed: 4 waiting on dependencies (c ← b; d ← c; f ← e; +1 more)',
    );
  });

  it('is emitted only when it changes', () => {
    expect(nextSummary(undefined, 'running 1 of 4 allowed')).toBe('running 1 of 4 allowed');
    expect(nextSummary('running 1 of 4 allowed', 'running 1 of 4 allowed')).toBeUndefined();
    expect(nextSummary('running 1 of 4 allowed', 'running 2 of 4 allowed')).toBe(
      'running 2 of 4 allowed',
    );

    const launch = new LaunchSummary();
    const lines = ['x', 'x', 'y', 'y', 'y', 'x'].map((l) => launch.update(l));
    expect(lines).toEqual(['x', undefined, 'y', undefined, undefined, 'x']);
  });
});

describe('schedule: bad input', () => {
  it.each([
    {
      stories: [story('a', ['ghost'])],
      message: 'story "a" depends on unknown story "ghost"',
    },
    {
      stories: [story('a', ['c']), story('b', ['a']), story('c', ['b']), story('d')],
      message: 'dependency cycle: a -> c -> b -> a',
    },
    {
      stories: [story('d', ['a']), story('a', ['b']), story('b', ['a'])],
      message: 'dependency cycle: a -> b -> a',
    },
    { stories: [story('a'), story('a')], message: 'duplicate story id "a"' },
  ])('rejects $message', ({ stories, message }) => {
    expect(thrown(() => decide(stories, {}))).toEqual({ tag: 'plan', message });
    expect(thrown(() => remainingChainLengths(stories))).toEqual({ tag: 'plan', message });
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects concurrency %p', (concurrency) => {
    expect(thrown(() => decide([story('a')], {}, { concurrency }))).toEqual({
      tag: 'config',
      message: `concurrency must be a whole number of at least 1, got ${String(concurrency)}`,
    });
  });

  it('rejects a negative number of free coder slots', () => {
    expect(thrown(() => decide([story('a')], {}, { freeCoderSlots: -1 }))).toEqual({
      tag: 'internal',
      message: 'free coder slots must be a whole number of at least 0, got -1',
    });
  });
});

/** The tag and message of the EpicflowError that `fn` throws. */
function thrown(fn: () => unknown): { tag: string; message: string } | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof EpicflowError) return { tag: e.tag, message: e.message };
    throw e;
  }
  return undefined;
}
