/** How another story of the plan relates to a given story. */
import type { Plan, Story } from '../model.js';

type Relation = 'dependency' | 'dependent' | 'parallel';

/** Ids of every story `id` depends on, directly or not. */
export function transitiveDependencies(stories: readonly Story[], id: string): Set<string> {
  const byId = new Map(stories.map((s) => [s.id, s]));
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.dependsOn ?? [])];
  while (stack.length > 0) {
    const next = stack.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(byId.get(next)?.dependsOn ?? []));
  }
  return seen;
}

export function relationOf(plan: Plan, story: string, other: string): Relation {
  if (transitiveDependencies(plan.stories, story).has(other)) return 'dependency';
  if (transitiveDependencies(plan.stories, other).has(story)) return 'dependent';
  return 'parallel';
}
