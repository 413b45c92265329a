import { describe, expect, it } from '@jest/globals';
import { parsePlan, planOptionsFor } from '../../../src/core/plan/index.js';

const owning = (path: string): string =>
  [
    '```epicflow',
    'stories:',
    '  - id: conf',
    '    title: Change the config',
    '    description: Edit it.',
    `    owns: [${JSON.stringify(path)}]`,
    '```',
    '',
  ].join('\n');

const codes = (markdown: string, options: ReturnType<typeof planOptionsFor>): string[] => {
  const parsed = parsePlan(markdown, options);
  return parsed.ok ? [] : parsed.violations.map((v) => v.code);
};

describe('planOptionsFor: one set of plan rules for every entry', () => {
  it('protects the default config locations and the file actually read', () => {
    const options = planOptionsFor({ allowWorkflowChanges: false }, './ci//epicflow.yml');
    expect(options.configPaths).toEqual([
      '.github/epicflow.yml',
      'epicflow.yml',
      'ci/epicflow.yml',
    ]);
    for (const path of ['.github/epicflow.yml', 'epicflow.yml', 'ci/epicflow.yml']) {
      expect(codes(owning(path), options)).toEqual(['protected-path']);
    }
  });

  it('names a default location once when that is the file read', () => {
    expect(planOptionsFor({ allowWorkflowChanges: false }, 'epicflow.yml').configPaths).toEqual([
      '.github/epicflow.yml',
      'epicflow.yml',
    ]);
  });

  it('lets stories own them only with allowWorkflowChanges', () => {
    const options = planOptionsFor({ allowWorkflowChanges: true }, 'ci/epicflow.yml');
    expect(options.allowWorkflowChanges).toBe(true);
    expect(codes(owning('ci/epicflow.yml'), options)).toEqual([]);
  });
});
