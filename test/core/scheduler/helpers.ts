import type { Story } from '../../../src/core/model.js';

/** A story with only what scheduling looks at; the rest is filler. */
export function story(id: string, dependsOn: readonly string[] = []): Story {
  return {
    id,
    title: `Story ${id}`,
    description: `Build ${id}.`,
    owns: [`src/${id}`],
    reads: [],
    dependsOn,
    provides: [],
    acceptance: [],
    testsChange: false,
  };
}
