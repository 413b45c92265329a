import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { parseRunTitle, RUN_NAME_TEMPLATE, runTitle } from '../../../src/core/epic/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('runTitle', () => {
  it('names a run the way the story workflow’s run-name does', () => {
    expect(runTitle({ epic: 42, story: 'checkout-api', attempt: 3 })).toBe(
      'epicflow epic 42 story checkout-api attempt 3',
    );
  });

  it.each(['app', 'github-token'])(
    'matches the run-name line of the %s story workflow template',
    async (variant) => {
      const path = `examples/workflows/${variant}/epicflow-story.yml`;
      const text = await readFile(join(root, path), 'utf8');
      const doc = YAML.parse(text) as Record<string, unknown>;
      expect(doc['run-name']).toBe(RUN_NAME_TEMPLATE);
      // The template with the inputs put in is what runTitle makes.
      const inputs: Record<string, string> = { epic: '7', story: 'db', attempt: '2' };
      const evaluated = RUN_NAME_TEMPLATE.replace(
        /\$\{\{ inputs\.(\w+) \}\}/g,
        (_, name: string) => inputs[name] ?? '',
      );
      expect(evaluated).toBe(runTitle({ epic: 7, story: 'db', attempt: 2 }));
    },
  );
});

describe('parseRunTitle', () => {
  it('reads the ids back from a run title', () => {
    expect(parseRunTitle('epicflow epic 12 story ui-2 attempt 1')).toEqual({
      epic: 12,
      story: 'ui-2',
      attempt: 1,
    });
  });

  it('round-trips every valid epic, story id and attempt', () => {
    const id = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,47}$/);
    const positive = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
    fc.assert(
      fc.property(positive, id, positive, (epic, story, attempt) => {
        const ref = { epic, story, attempt };
        expect(parseRunTitle(runTitle(ref))).toEqual(ref);
      }),
    );
  });

  it.each([
    ['another workflow’s title', 'epicflow story'],
    ['an empty title', ''],
    ['a title whose inputs were never put in', RUN_NAME_TEMPLATE],
    ['a run-name with empty inputs', 'epicflow epic  story  attempt '],
    ['epic 0', 'epicflow epic 0 story api attempt 1'],
    ['attempt 0', 'epicflow epic 1 story api attempt 0'],
    ['a negative epic', 'epicflow epic -1 story api attempt 1'],
    ['a leading zero', 'epicflow epic 01 story api attempt 1'],
    ['a fractional attempt', 'epicflow epic 1 story api attempt 1.5'],
    ['an epic beyond safe integers', 'epicflow epic 9007199254740993 story api attempt 1'],
    ['an upper-case story id', 'epicflow epic 1 story Api attempt 1'],
    ['a story id starting with "-"', 'epicflow epic 1 story -api attempt 1'],
    ['a story id with an underscore', 'epicflow epic 1 story my_api attempt 1'],
    ['a story id longer than 48 characters', `epicflow epic 1 story ${'a'.repeat(49)} attempt 1`],
    ['a story id with a space', 'epicflow epic 1 story my api attempt 1'],
    ['a leading space', ' epicflow epic 1 story api attempt 1'],
    ['a trailing newline', 'epicflow epic 1 story api attempt 1\n'],
    ['two spaces', 'epicflow epic 1  story api attempt 1'],
    ['text after the attempt', 'epicflow epic 1 story api attempt 1 (rerun)'],
    ['another case', 'Epicflow epic 1 story api attempt 1'],
    ['a missing attempt', 'epicflow epic 1 story api'],
  ])('rejects %s', (_, title) => {
    expect(parseRunTitle(title)).toBeNull();
  });
});
