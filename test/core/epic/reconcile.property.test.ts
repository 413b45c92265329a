import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Trigger } from '../../../src/core/epic/index.js';
import { buildPlan } from '../../../src/core/plan/index.js';
import { completed, dispatches, story, World } from './world.js';

/** A random DAG: story i may depend on any earlier story. */
const graphs = fc.integer({ min: 1, max: 10 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.subarray(
        Array.from({ length: i }, (_, j) => j),
        { maxLength: Math.min(3, i) },
      ),
    ),
  ),
);

describe('reconcile driven by random job outcomes', () => {
  it('dispatches each attempt once, within capacity, only when ready, and finishes with every story merged', () => {
    fc.assert(
      fc.property(
        graphs,
        fc.integer({ min: 1, max: 4 }),
        fc.oneof(fc.constant(Infinity), fc.integer({ min: 0, max: 3 })),
        fc.infiniteStream(fc.nat(99)),
        (deps, concurrency, slots, dice) => {
          const ids = deps.map((_, i) => `s${i}`);
          const world = new World(
            buildPlan(
              deps.map((d, i) =>
                story(
                  ids[i] ?? '',
                  d.map((j) => `s${j}`),
                ),
              ),
            ),
            {
              concurrency,
            },
          );
          world.coderSlots = slots;
          const roll = dice[Symbol.iterator]();
          const next = (): number => roll.next().value as number;
          const capacity = Math.max(1, Math.min(concurrency, slots));
          const seen = new Set<string>();

          const step = (trigger: Trigger): void => {
            const actions = world.step(trigger);
            for (const d of dispatches(actions)) {
              const key = `${d.story}#${d.attempt}`;
              expect(seen.has(key)).toBe(false);
              seen.add(key);
              const s = world.plan.stories.find((x) => x.id === d.story);
              for (const dep of s?.dependsOn ?? []) expect(world.merged.has(dep)).toBe(true);
            }
            const active = Object.values(world.records).filter((r) => r.status === 'active').length;
            expect(active).toBeLessThanOrEqual(capacity);
            // A redelivered event changes nothing.
            if (next() < 20) expect(dispatches(world.step(trigger))).toEqual([]);
          };

          step({ kind: 'label' });
          for (let guard = 0; guard < 400 && !world.finished; guard += 1) {
            const active = Object.values(world.records).filter((r) => r.status === 'active');
            if (active.length === 0) {
              step({ kind: 'resume', by: 'alice' });
              continue;
            }
            const r = active[next() % active.length];
            if (r === undefined) continue;
            const dice100 = next();
            if (dice100 < 70) world.jobMerges(r.story);
            else if (dice100 < 90) world.jobFails(r.story, 'no changes');
            // else: the job died without writing its record.
            step(completed(r.story, r.attempt, dice100 < 90 ? 'success' : 'failure'));
          }
          expect(world.finished).toBe(true);
          expect([...world.merged.keys()].sort()).toEqual([...ids].sort());
          expect(world.pr?.draft).toBe(false);
        },
      ),
      { numRuns: 60, seed: 20261130 },
    );
  });
});
