import { describe, expect, it } from '@jest/globals';
import { readPlannerAnswer } from '../../../src/core/planner/index.js';

const block = (ids: string[], owns = (id: string) => `src/${id}`): string =>
  `\`\`\`epicflow\nstories:\n${ids.map((id) => `  - { id: ${id}, title: T, description: D, owns: [${owns(id)}] }`).join('\n')}\n\`\`\``;

describe('readPlannerAnswer', () => {
  it('reads the last ```epicflow block of the final message', () => {
    const message = `Draft:\n${block(['draft'])}\n\nFinal plan:\n${block(['a', 'b'])}\nDone.`;
    const answer = readPlannerAnswer(message, {});
    expect(answer.result.ok && answer.result.plan.stories.map((s) => s.id)).toEqual(['a', 'b']);
    expect(answer.yaml).toContain('id: a');
    expect(answer.yaml).not.toContain('draft');
  });

  it('says what is missing when there is no block', () => {
    const answer = readPlannerAnswer('Here is my plan: stories: []', {});
    expect(answer.yaml).toBeUndefined();
    expect(answer.result.violations).toEqual([
      {
        code: 'no-plan-block',
        message:
          'your final message has no ```epicflow block: end it with the whole plan in one fenced block whose info string is epicflow',
      },
    ]);
  });

  it('checks the block with the options of a hand-written plan', () => {
    const ci = block(['ci'], () => '.github/workflows/ci.yml');
    expect(readPlannerAnswer(ci, {}).result.violations.map((v) => v.code)).toEqual([
      'protected-path',
    ]);
    expect(readPlannerAnswer(ci, { allowWorkflowChanges: true }).result.ok).toBe(true);
    const conf = block(['c'], () => 'conf/epicflow.yml');
    expect(
      readPlannerAnswer(conf, { configPaths: ['conf/epicflow.yml'] }).result.violations.map(
        (v) => v.code,
      ),
    ).toEqual(['protected-path']);
  });

  it('counts line numbers from the opening fence', () => {
    const answer = readPlannerAnswer(
      'text\n```epicflow\nstories:\n  - id: a\n    id: b\n```\n',
      {},
    );
    expect(answer.result.violations[0]).toMatchObject({ code: 'yaml', line: 4 });
  });

  it('reads a block fenced with more backticks, holding a fence inside', () => {
    const message =
      '````epicflow\nstories:\n  - id: a\n    title: T\n    description: |\n      Use ```code```.\n    owns: [a]\n````';
    expect(readPlannerAnswer(message, {}).result.ok).toBe(true);
  });
});
