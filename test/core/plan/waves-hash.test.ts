import { describe, expect, it } from '@jest/globals';
import {
  computeWaves,
  parsePlan,
  readBackAsWritten,
  samePlanEntries,
  storyHash,
} from '../../../src/core/plan/index.js';
import { EpicflowError } from '../../../src/core/errors.js';
import type { Plan, Story } from '../../../src/core/model.js';

const deps = (id: string, ...dependsOn: string[]) => ({ id, dependsOn });

describe('computeWaves', () => {
  it('puts stories without dependencies in wave 1, in plan order', () => {
    expect(computeWaves([deps('b'), deps('a'), deps('c')])).toEqual([['b', 'a', 'c']]);
  });

  it('layers by the longest dependency path, not the shortest', () => {
    // d depends on a (wave 1) and on c (wave 3), so it lands in wave 4.
    const stories = [deps('d', 'a', 'c'), deps('a'), deps('b', 'a'), deps('c', 'b'), deps('e')];
    expect(computeWaves(stories)).toEqual([['a', 'e'], ['b'], ['c'], ['d']]);
  });

  it('handles a diamond', () => {
    const stories = [
      deps('top'),
      deps('left', 'top'),
      deps('right', 'top'),
      deps('bottom', 'left', 'right'),
    ];
    expect(computeWaves(stories)).toEqual([['top'], ['left', 'right'], ['bottom']]);
  });

  it('returns no waves for no stories', () => {
    expect(computeWaves([])).toEqual([]);
  });

  it('leaves out stories on a cycle instead of looping', () => {
    expect(computeWaves([deps('a', 'b'), deps('b', 'a'), deps('c')])).toEqual([['c']]);
  });
});

const base: Story = {
  id: 'api',
  title: 'Build the API',
  description: 'Serve it.',
  owns: ['src/api', 'test/api'],
  reads: [],
  dependsOn: [],
  provides: [],
  acceptance: ['answers 200'],
  testsChange: false,
};

function hashOf(markdown: string, id = 'api'): string {
  const result = parsePlan(markdown);
  if (!result.ok) throw new Error(JSON.stringify(result.violations));
  return result.plan.hashes[id] ?? '';
}

describe('storyHash', () => {
  it('is a 16-character hex string, stable across calls', () => {
    expect(storyHash(base)).toMatch(/^[0-9a-f]{16}$/);
    expect(storyHash({ ...base })).toBe(storyHash(base));
  });

  it('ignores YAML formatting, key order and written-out defaults', () => {
    const a = hashOf(
      '```epicflow\nstories:\n  - id: api\n    title: Build the API\n    description: Serve it.\n    owns: [src/api, test/api]\n    acceptance: [answers 200]\n```\n',
    );
    const b = hashOf(
      [
        '~~~epicflow',
        'stories:',
        '- owns:',
        '  - ./test/api/',
        '  - src/api',
        '  acceptance:',
        '  - "answers 200"',
        '  description: |',
        '    Serve it.',
        '  reads: []',
        '  dependsOn: []',
        '  testsChange: false',
        '  title: "Build the API"',
        '  id: api',
        '~~~',
      ].join('\n'),
    );
    expect(b).toBe(a);
    expect(a).toBe(storyHash(base));
  });

  it('changes when the entry changes', () => {
    const h = storyHash(base);
    expect(storyHash({ ...base, title: 'Build the API v2' })).not.toBe(h);
    expect(storyHash({ ...base, owns: ['src/api'] })).not.toBe(h);
    expect(storyHash({ ...base, reads: ['docs'] })).not.toBe(h);
    expect(storyHash({ ...base, dependsOn: ['db'] })).not.toBe(h);
    expect(storyHash({ ...base, acceptance: [] })).not.toBe(h);
    expect(storyHash({ ...base, executor: 'claude' })).not.toBe(h);
    expect(storyHash({ ...base, testsChange: true })).not.toBe(h);
  });
});

describe('samePlanEntries', () => {
  const plan = (hashes: Record<string, string>): Plan =>
    ({ stories: [], hashes, waves: [] }) as unknown as Plan;

  it('is true for the same entries in another order (a plan read back from its text)', () => {
    expect(samePlanEntries(plan({ a: '1', b: '2' }), plan({ b: '2', a: '1' }))).toBe(true);
  });

  it('is false when an entry changed, or a story came or went', () => {
    expect(samePlanEntries(plan({ a: '1', b: '2' }), plan({ a: '1', b: '3' }))).toBe(false);
    expect(samePlanEntries(plan({ a: '1' }), plan({ a: '1', b: '2' }))).toBe(false);
  });
});

describe('readBackAsWritten', () => {
  const text = (title: string) =>
    [
      '```epicflow',
      'stories:',
      '  - id: a',
      `    title: ${title}`,
      '    description: Do a.',
      '    owns: [src/a]',
      '    acceptance: [a works]',
      '```',
      '',
    ].join('\n');
  const written = parsePlan(text('A'));
  if (!written.ok) throw new Error('the fixture plan is invalid');

  it('returns the plan read back when its entries are the ones written', () => {
    expect(
      readBackAsWritten(parsePlan(text('A')), written.plan, 'the drafted plan').hashes,
    ).toEqual(written.plan.hashes);
  });

  it('refuses a text that reads back as another plan, or as no plan, naming what and why', () => {
    expect(() => readBackAsWritten(parsePlan(text('B')), written.plan, 'the drafted plan')).toThrow(
      'the drafted plan does not read back as validated',
    );
    let caught: unknown;
    try {
      readBackAsWritten(parsePlan('no block here'), written.plan, 'the sub-issue plan');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(EpicflowError);
    expect((caught as EpicflowError).tag).toBe('internal');
    expect((caught as EpicflowError).details.join('\n')).toMatch(/^[a-z-]+: /);
  });
});
