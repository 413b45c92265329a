import type { Plan, Story } from '../../../src/core/model.js';

export function story(id: string, extra: Partial<Story> = {}): Story {
  return {
    id,
    title: `Story ${id}`,
    description: `Build ${id}.`,
    owns: [`src/${id}`],
    reads: [],
    dependsOn: [],
    provides: [],
    acceptance: [],
    testsChange: false,
    ...extra,
  };
}

export function plan(stories: Story[]): Plan {
  return {
    stories,
    waves: [stories.map((s) => s.id)],
    hashes: Object.fromEntries(stories.map((s) => [s.id, `h-${s.id}`])),
  };
}
