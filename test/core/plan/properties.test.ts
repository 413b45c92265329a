import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { MAX_REPORTS_PER_CODE, parsePlan, VIOLATION_CODES } from '../../../src/core/plan/index.js';
import type { PlanResult } from '../../../src/core/plan/index.js';

function fence(body: string): string {
  return `\`\`\`epicflow\n${body}\n\`\`\`\n`;
}

/** Any result is either a plan with no violation, or known violations (at least one). */
function expectWellFormed(result: PlanResult): void {
  if (result.ok) {
    expect(result.violations).toEqual([]);
  } else {
    expect(result.violations.length).toBeGreaterThan(0);
    for (const v of result.violations) {
      expect(VIOLATION_CODES).toContain(v.code);
      expect(typeof v.message).toBe('string');
    }
  }
}

const FIELDS = [
  'id',
  'title',
  'description',
  'owns',
  'reads',
  'dependsOn',
  'provides',
  'acceptance',
  'executor',
  'testsChange',
  'extra',
];

describe('parsePlan never throws', () => {
  it('on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite' }), (s) => expectWellFormed(parsePlan(s))),
    );
  });

  it('on arbitrary text inside an epicflow fence', () => {
    fc.assert(fc.property(fc.string(), (s) => expectWellFormed(parsePlan(fence(s)))));
  });

  it('on YAML of arbitrary values shaped roughly like a plan', () => {
    const value = fc.oneof(
      fc.jsonValue(),
      fc.constantFrom('src', '.', '../x', '/abs', 'src/*', '.git', '.github/workflows/ci.yml', ''),
      fc.array(fc.constantFrom('src', 'src/a', 'a', 'b', 'c', '.', 'docs')),
    );
    const entry = fc.oneof(fc.dictionary(fc.constantFrom(...FIELDS), value), fc.jsonValue());
    const doc = fc.oneof(fc.record({ stories: fc.array(entry, { maxLength: 8 }) }), fc.jsonValue());
    fc.assert(fc.property(doc, (d) => expectWellFormed(parsePlan(fence(stringify(d))))));
  });

  it('on a huge plan, listing a bounded number of violations', () => {
    const n = 1000;
    const entries = Array.from(
      { length: n },
      (_, i) =>
        `  - {id: s${i}, title: t, description: d, owns: [.], dependsOn: [s${(i + 1) % n}]}`,
    );
    const result = parsePlan(fence(`stories:\n${entries.join('\n')}`));
    expect(result.ok).toBe(false);
    const byCode = new Map<string, number>();
    for (const v of result.violations) byCode.set(v.code, (byCode.get(v.code) ?? 0) + 1);
    expect(Object.fromEntries(byCode)).toEqual({
      'too-many-stories': 1,
      cycle: 1,
      'owns-overlap': MAX_REPORTS_PER_CODE + 1,
    });
    expect(result.violations.at(-1)).toEqual({
      code: 'owns-overlap',
      message: 'more owns-overlap violations not listed',
    });
  });
});

/** A random DAG: story i may depend only on stories created before it; plan order is shuffled. */
const dagPlan = fc
  .integer({ min: 1, max: 25 })
  .chain((n) =>
    fc.tuple(
      fc.tuple(
        ...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => j))),
      ),
      fc.shuffledSubarray(
        Array.from({ length: n }, (_, i) => i),
        { minLength: n, maxLength: n },
      ),
    ),
  )
  .map(([deps, order]) =>
    order.map((i) => ({
      id: `s${i}`,
      title: `Story ${i}`,
      description: 'Build it.',
      owns: [`src/s${i}`],
      dependsOn: (deps[i] ?? []).map((j) => `s${j}`),
    })),
  );

describe('waves of random valid plans', () => {
  it('put every story in a later wave than each of its dependencies, at the least such depth', () => {
    fc.assert(
      fc.property(dagPlan, (entries) => {
        const result = parsePlan(fence(stringify({ stories: entries })));
        if (!result.ok) throw new Error(JSON.stringify(result.violations));
        const wave = new Map<string, number>();
        result.plan.waves.forEach((ids, w) => ids.forEach((id) => wave.set(id, w + 1)));
        expect(wave.size).toBe(entries.length);
        for (const s of entries) {
          const own = wave.get(s.id) ?? 0;
          const depWaves = s.dependsOn.map((d) => wave.get(d) ?? 0);
          for (const w of depWaves) expect(own).toBeGreaterThan(w);
          expect(own).toBe(1 + Math.max(0, ...depWaves));
        }
        // Each wave lists its ids in plan order.
        const position = new Map(entries.map((s, i) => [s.id, i]));
        for (const ids of result.plan.waves) {
          const positions = ids.map((id) => position.get(id) ?? -1);
          expect(positions).toEqual([...positions].sort((a, b) => a - b));
        }
      }),
    );
  });
});

describe('story hashes', () => {
  it('do not depend on key order or on written-out defaults', () => {
    const story = fc.record({
      id: fc.constantFrom('api', 'ui', 'db-layer'),
      title: fc.string({ minLength: 1 }).filter((s) => s.trim().length > 0 && !/[\r\n]/.test(s)),
      description: fc.string({ minLength: 1 }).filter((s) => s.trim().length > 0),
      owns: fc.uniqueArray(fc.constantFrom('src/a', 'src/b', 'lib', 'docs/x'), { minLength: 1 }),
      provides: fc.array(fc.string()),
      testsChange: fc.boolean(),
    });
    fc.assert(
      fc.property(story, fc.boolean(), fc.infiniteStream(fc.double()), (s, defaults, random) => {
        const withDefaults = defaults ? { ...s, reads: [], dependsOn: [], acceptance: [] } : s;
        const keys = Object.keys(withDefaults);
        const weights = new Map(keys.map((k) => [k, random.next().value]));
        const shuffled = Object.fromEntries(
          [...keys]
            .sort((a, b) => (weights.get(a) ?? 0) - (weights.get(b) ?? 0))
            .map((k) => [k, (withDefaults as Record<string, unknown>)[k]]),
        );
        const a = parsePlan(fence(stringify({ stories: [s] })));
        const b = parsePlan(
          fence(stringify({ stories: [shuffled] }, { defaultStringType: 'QUOTE_DOUBLE' })),
        );
        if (!a.ok || !b.ok) throw new Error('both plans should be valid');
        expect(b.plan.hashes[s.id]).toBe(a.plan.hashes[s.id]);
      }),
    );
  });
});
