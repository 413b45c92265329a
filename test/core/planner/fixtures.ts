/** Stories and plans for the planner's core tests, built with the real plan builder. */
import type { Plan, Story } from '../../../src/core/model.js';
import { buildPlan } from '../../../src/core/plan/index.js';

export function story(id: string, extra: Partial<Story> = {}): Story {
  return {
    id,
    title: `Story ${id}`,
    description: `Build ${id}.`,
    owns: [`src/${id}`],
    reads: [],
    dependsOn: [],
    provides: [],
    acceptance: [`${id} works`],
    testsChange: false,
    ...extra,
  };
}

export function plan(stories: Story[]): Plan {
  return buildPlan(stories);
}
