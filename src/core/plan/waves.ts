import type { Story } from '../model.js';

/**
 * Groups stories by dependency depth (longest path): wave 1 holds the stories
 * without dependencies, a story's wave is 1 + the largest wave among its
 * dependencies. Each wave lists ids in plan order. Meant for validated plans:
 * unknown dependencies are ignored, and stories on or behind a cycle are left out.
 */
export function computeWaves(stories: readonly Pick<Story, 'id' | 'dependsOn'>[]): string[][] {
  const ids = new Set(stories.map((s) => s.id));
  const pending = new Map<string, Set<string>>();
  const dependents = new Map<string, string[]>();
  for (const s of stories) {
    const deps = new Set(s.dependsOn.filter((d) => ids.has(d) && d !== s.id));
    pending.set(s.id, deps);
    for (const d of deps) {
      const list = dependents.get(d) ?? [];
      list.push(s.id);
      dependents.set(d, list);
    }
  }

  // Kahn's algorithm, one layer at a time: a story joins the layer after the one
  // in which its last dependency was placed, which is its longest-path depth.
  const wave = new Map<string, number>();
  let layer = stories.filter((s) => pending.get(s.id)?.size === 0).map((s) => s.id);
  for (let depth = 1; layer.length > 0; depth += 1) {
    const next = new Set<string>();
    for (const id of layer) {
      wave.set(id, depth);
      for (const dependent of dependents.get(id) ?? []) {
        const deps = pending.get(dependent);
        deps?.delete(id);
        if (deps?.size === 0) next.add(dependent);
      }
    }
    layer = [...next];
  }

  const waves: string[][] = [];
  for (const s of stories) {
    const w = wave.get(s.id);
    if (w === undefined) continue;
    (waves[w - 1] ??= []).push(s.id);
  }
  return waves;
}
