import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../../src/core/config/index.js';
import { EpicflowError } from '../../../src/core/errors.js';

function details(text: string): readonly string[] {
  try {
    parseConfig(text, 'epicflow.yml');
  } catch (e) {
    if (e instanceof EpicflowError) return e.details;
    throw e;
  }
  throw new Error('expected the config to be rejected');
}

describe('the planner configuration', () => {
  it('defaults to 30 stories, 2 repair rounds, no sub-issues', () => {
    expect(parseConfig('', 'epicflow.yml').planner).toEqual({
      maxStories: 30,
      repairRounds: 2,
      subIssues: false,
    });
    expect(parseConfig('planner: { maxStories: 5 }', 'epicflow.yml').planner).toEqual({
      maxStories: 5,
      repairRounds: 2,
      subIssues: false,
    });
  });

  it('accepts the planner role on any harness, alone or with others', () => {
    const config = parseConfig(
      [
        'executors:',
        '  - { id: c, harness: codex }',
        '  - { id: p, harness: command, command: [plan.sh], roles: [planner] }',
        '  - { id: q, harness: claude, roles: [coder, judge, planner] }',
        'planner: { maxStories: 100, repairRounds: 0, subIssues: true }',
      ].join('\n'),
      'epicflow.yml',
    );
    expect(config.executors.map((e) => e.roles)).toEqual([
      ['coder'],
      ['planner'],
      ['coder', 'judge', 'planner'],
    ]);
    expect(config.planner).toEqual({ maxStories: 100, repairRounds: 0, subIssues: true });
  });

  it.each<[string, string, string]>([
    [
      'no story at all',
      'planner: { maxStories: 0 }',
      'planner.maxStories: expected an integer from 1 to 100, got 0',
    ],
    [
      'more stories than GitHub allows',
      'planner: { maxStories: 101 }',
      'planner.maxStories: expected an integer from 1 to 100, got 101',
    ],
    [
      'negative repair rounds',
      'planner: { repairRounds: -1 }',
      'planner.repairRounds: expected an integer of 0 or more, got -1',
    ],
    [
      'a misspelt key',
      'planner: { repairRound: 3 }',
      'planner.repairRound: unknown key (did you mean "repairRounds"?)',
    ],
    [
      'a non-boolean subIssues',
      'planner: { subIssues: yes please }',
      'planner.subIssues: expected true or false, got "yes please"',
    ],
    [
      'a list',
      'planner: [30]',
      'planner: expected a mapping with maxStories, repairRounds and subIssues, got a list',
    ],
  ])('names the field of %s', (_name, text, line) => {
    expect(details(text)).toEqual([line]);
  });
});

describe('the config epicflow init writes', () => {
  it('lets its agents plan as well as code, so plan draft works at once', async () => {
    const { AGENT_PRESETS, renderConfig } = await import('../../../src/core/init/index.js');
    const config = parseConfig(
      renderConfig({
        presets: AGENT_PRESETS.slice(0, 2),
        setup: { command: 'npm ci', from: 'package-lock.json' },
        gates: [{ command: 'npm test', from: 'package.json scripts.test' }],
        version: '1.0.0',
      }),
      '.github/epicflow.yml',
    );
    expect(config.executors.map((e) => e.roles)).toEqual([
      ['coder', 'planner'],
      ['coder', 'planner'],
    ]);
  });
});
