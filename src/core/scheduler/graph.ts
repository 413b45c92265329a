import { EpicflowError } from '../errors.js';
import type { Story } from '../model.js';

/**
 * An index-based view of a plan's dependency graph. Built once per scheduling
 * call in O(V+E), so every later pass is a walk over small integer arrays.
 */
export interface StoryGraph {
  /** Story ids in plan order; a story's index is its plan position. */
  readonly ids: readonly string[];
  readonly indexOf: ReadonlyMap<string, number>;
  /** Direct dependencies of each story, by index. */
  readonly deps: readonly (readonly number[])[];
  /** Direct dependents of each story, by index. */
  readonly dependents: readonly (readonly number[])[];
  /** A topological order: every story comes after all its dependencies. */
  readonly topo: readonly number[];
}

/**
 * Builds the graph. A validated plan never has duplicates, unknown dependencies
 * or cycles; they are still rejected here (not looped on forever) because the
 * scheduler may be handed stories that skipped validation.
 */
export function buildStoryGraph(stories: readonly Story[]): StoryGraph {
  const ids = stories.map((s) => s.id);
  const indexOf = new Map<string, number>();
  ids.forEach((id, i) => {
    if (indexOf.has(id)) throw new EpicflowError('plan', `duplicate story id "${id}"`);
    indexOf.set(id, i);
  });

  const dependents: number[][] = ids.map(() => []);
  const deps = stories.map((story, i) =>
    story.dependsOn.map((depId) => {
      const d = indexOf.get(depId);
      if (d === undefined) {
        throw new EpicflowError('plan', `story "${story.id}" depends on unknown story "${depId}"`);
      }
      dependents[d]?.push(i);
      return d;
    }),
  );

  // Kahn's algorithm: what is left over when it stops sits on a cycle.
  const missing = deps.map((ds) => ds.length);
  const topo: number[] = [];
  for (let i = 0; i < missing.length; i++) if (missing[i] === 0) topo.push(i);
  for (let k = 0; k < topo.length; k++) {
    for (const t of dependents[topo[k] ?? 0] ?? []) {
      const left = (missing[t] ?? 0) - 1;
      missing[t] = left;
      if (left === 0) topo.push(t);
    }
  }
  if (topo.length < ids.length) {
    throw new EpicflowError('plan', `dependency cycle: ${describeCycle(ids, deps, missing)}`);
  }
  return { ids, indexOf, deps, dependents, topo };
}

/**
 * Every story Kahn's algorithm left over still misses a dependency that was
 * also left over, so following those dependencies must come back to a story
 * already seen: that loop is a cycle, printed `a -> b -> a` (a depends on b).
 */
function describeCycle(
  ids: readonly string[],
  deps: readonly (readonly number[])[],
  missing: readonly number[],
): string {
  const stuck = (i: number): boolean => (missing[i] ?? 0) > 0;
  const path: number[] = [];
  const seenAt = new Map<number, number>();
  let at = missing.findIndex((_, i) => stuck(i));
  while (!seenAt.has(at)) {
    seenAt.set(at, path.length);
    path.push(at);
    at = (deps[at] ?? []).find(stuck) ?? at;
  }
  return [...path.slice(seenAt.get(at)), at].map((i) => ids[i]).join(' -> ');
}

/** Chain lengths by index; see `remainingChainLengths`. */
export function chainLengthsOf(graph: StoryGraph): number[] {
  const length = graph.ids.map(() => 1);
  for (let k = graph.topo.length - 1; k >= 0; k--) {
    const i = graph.topo[k] ?? 0;
    let below = 0;
    for (const t of graph.dependents[i] ?? []) below = Math.max(below, length[t] ?? 0);
    length[i] = 1 + below;
  }
  return length;
}

/**
 * For each story, the number of stories (itself included) on the longest chain
 * of dependents hanging below it. Starting the story with the longest chain
 * first keeps the critical path moving.
 */
export function remainingChainLengths(stories: readonly Story[]): Record<string, number> {
  const graph = buildStoryGraph(stories);
  const length = chainLengthsOf(graph);
  return Object.fromEntries(graph.ids.map((id, i) => [id, length[i] ?? 1]));
}
