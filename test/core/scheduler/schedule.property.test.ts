import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Story, StoryStatus } from '../../../src/core/model.js';
import { remainingChainLengths, schedule } from '../../../src/core/scheduler/index.js';
import { story } from './helpers.js';

/**
 * Random DAGs: an edge between two of n nodes points from the higher creation
 * index to the lower one, so there is never a cycle; the plan lists the nodes
 * in a random order, so plan order is not a topological order.
 */
const dagArb = fc.integer({ min: 1, max: 24 }).chain((n) =>
  fc
    .record({
      edges: fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: 3 * n }),
      order: fc.shuffledSubarray(
        Array.from({ length: n }, (_, i) => i),
        { minLength: n, maxLength: n },
      ),
    })
    .map(({ edges, order }) => {
      const deps = Array.from({ length: n }, () => new Set<string>());
      for (const [a, b] of edges) {
        if (a !== b) deps[Math.max(a, b)]?.add(`s${Math.min(a, b)}`);
      }
      return order.map((i) => story(`s${i}`, [...(deps[i] ?? [])]));
    }),
);

const limitsArb = fc.record({
  concurrency: fc.integer({ min: 1, max: 5 }),
  rosterSlots: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constant(Infinity)),
  /** Which running story finishes next, consumed one per event. */
  picks: fc.array(fc.nat(), { maxLength: 80 }),
});

interface RunResult {
  readonly status: Record<string, StoryStatus>;
  readonly reasons: Record<string, string>;
}

/**
 * Drives the scheduler the way the engine loop does: apply the decision, let
 * one running story finish (chosen by `picks`), decide again, until finished.
 * Checks the per-decision invariants on the way.
 */
function drive(
  stories: readonly Story[],
  limits: { concurrency: number; rosterSlots: number; picks: readonly number[] },
  failing: ReadonlySet<string> = new Set(),
): RunResult {
  const status: Record<string, StoryStatus> = {};
  const reasons: Record<string, string> = {};
  const byId = new Map(stories.map((s) => [s.id, s]));
  const cap = Math.max(1, Math.min(limits.concurrency, limits.rosterSlots));
  let step = 0;
  for (let round = 0; round <= 2 * stories.length + 1; round++) {
    const running = stories.filter((s) => status[s.id] === 'active');
    const d = schedule({
      stories,
      status,
      concurrency: limits.concurrency,
      freeCoderSlots: Math.max(0, limits.rosterSlots - running.length),
    });
    for (const id of d.start) {
      expect(status[id] ?? 'planned').toMatch(/^(planned|waiting)$/);
      for (const dep of byId.get(id)?.dependsOn ?? []) expect(status[dep]).toBe('done');
      status[id] = 'active';
    }
    for (const h of d.hold) {
      status[h.id] = 'waiting';
      reasons[h.id] = h.reason;
    }
    for (const id of d.release) status[id] = 'planned';
    const active = stories.filter((s) => status[s.id] === 'active');
    expect(active.length).toBeLessThanOrEqual(cap);
    if (d.finished) return { status, reasons };
    // Not finished means something runs and will settle.
    expect(active.length).toBeGreaterThan(0);
    const pick = active[(limits.picks[step++] ?? 0) % active.length];
    if (pick !== undefined) status[pick.id] = failing.has(pick.id) ? 'failed' : 'done';
  }
  throw new Error('the scheduler never reported finished');
}

describe('schedule (properties)', () => {
  it('respects limits and dependencies, and finishes with every story done', () => {
    fc.assert(
      fc.property(dagArb, limitsArb, (stories, limits) => {
        const { status } = drive(stories, limits);
        for (const s of stories) expect(status[s.id]).toBe('done');
      }),
      { numRuns: 300 },
    );
  });

  it('with failures, holds exactly the dependents of failed stories and runs the rest', () => {
    const arb = dagArb.chain((stories) =>
      fc.record({
        stories: fc.constant(stories),
        failing: fc.subarray(stories.map((s) => s.id)),
      }),
    );
    fc.assert(
      fc.property(arb, limitsArb, ({ stories, failing }, limits) => {
        const failSet = new Set(failing);
        const { status, reasons } = drive(stories, limits, failSet);
        const byId = new Map(stories.map((s) => [s.id, s]));
        for (const s of stories) {
          const st = status[s.id];
          const depsOk = s.dependsOn.every((d) => status[d] === 'done');
          if (depsOk) {
            expect(st).toBe(failSet.has(s.id) ? 'failed' : 'done');
          } else {
            expect(st).toBe('waiting');
            const culprit = /^waiting for (.+)$/.exec(reasons[s.id] ?? '')?.[1] ?? '';
            expect(status[culprit]).toBe('failed');
            expect(isAncestor(byId, culprit, s.id)).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('ranks every story above its dependents', () => {
    fc.assert(
      fc.property(dagArb, (stories) => {
        const chain = remainingChainLengths(stories);
        for (const s of stories) {
          for (const d of s.dependsOn) expect(chain[d]).toBeGreaterThan(chain[s.id] ?? 0);
        }
      }),
    );
  });
});

function isAncestor(byId: ReadonlyMap<string, Story>, ancestor: string, id: string): boolean {
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.dependsOn ?? [])];
  for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
    if (at === ancestor) return true;
    if (seen.has(at)) continue;
    seen.add(at);
    stack.push(...(byId.get(at)?.dependsOn ?? []));
  }
  return false;
}
