import { describe, expect, it } from '@jest/globals';
import type { Story } from '../../../src/core/model.js';
import { checkPlanQuality, QUALITY_CODES } from '../../../src/core/planner/index.js';
import { plan, story } from './fixtures.js';

const files = [
  'README.md',
  'src/server.ts',
  ...Array.from({ length: 30 }, (_, i) => `src/lib/f${i}.ts`),
  ...Array.from({ length: 10 }, (_, i) => `docs/p${i}.md`),
];
const options = { files, maxStories: 4, coders: ['codex', 'claude'] };

function lines(stories: Story[], opts = options): string[] {
  return checkPlanQuality(plan(stories), opts).map(
    (w) => `${w.mustFix ? 'must-fix ' : ''}${w.code}: ${w.message}`,
  );
}

describe('checkPlanQuality', () => {
  it('finds nothing in a good plan', () => {
    expect(
      lines([
        story('api', { owns: ['src/api'], reads: ['src/server.ts'] }),
        story('ui', { owns: ['src/ui'], reads: ['src/api'], dependsOn: ['api'] }),
        story('docs', { owns: ['docs/api.md'], reads: ['docs'], executor: 'claude' }),
      ]),
    ).toEqual([]);
  });

  it.each<[string, Story[], string[]]>([
    [
      'more stories than planner.maxStories (must fix)',
      ['a', 'b', 'c', 'd', 'e'].map((id) => story(id)),
      [
        'must-fix too-many-stories-for-config: the plan has 5 stories; the configuration allows at most 4 (planner.maxStories): merge small stories',
      ],
    ],
    [
      'an executor that is not a coder (must fix)',
      [story('a', { executor: 'gemini' })],
      [
        'must-fix unknown-executor: story "a": executor "gemini" is not a coder of the configuration (coders: codex, claude); name one of them or leave executor out',
      ],
    ],
    [
      'a story owning the whole repository',
      [story('all', { owns: ['.'] })],
      ['broad-owns: story "all": owns ".", the whole repository: own only the paths it changes'],
    ],
    [
      'a story owning more than half of the files',
      [story('lib', { owns: ['src/lib', 'README.md'] })],
      [
        'broad-owns: story "lib": owns "src/lib", "README.md", 74% of the repository\'s 42 files (more than 50%): own only the paths it changes',
      ],
    ],
    [
      'reads of paths that are neither in the repository nor owned',
      [story('a', { reads: ['src/server.ts', 'src/nope.ts', 'lib'] })],
      [
        'unknown-read: story "a": reads "src/nope.ts", which is not in the repository and no story owns it',
        'unknown-read: story "a": reads "lib", which is not in the repository and no story owns it',
      ],
    ],
    [
      'a story without acceptance criteria',
      [story('a', { acceptance: [] })],
      ['no-acceptance: story "a": no acceptance criteria: add observable "done when" checks'],
    ],
    [
      'a large plan that is one chain',
      ['a', 'b', 'c', 'd', 'e'].map((id, i, all) =>
        story(id, i === 0 ? {} : { dependsOn: [all[i - 1] as string] }),
      ),
      [
        'must-fix too-many-stories-for-config: the plan has 5 stories; the configuration allows at most 4 (planner.maxStories): merge small stories',
        'no-parallelism: the 5 stories form one chain (5 waves): none can run in parallel; depend only on stories whose work is really needed first',
      ],
    ],
  ])('reports %s', (_name, stories, expected) => {
    expect(lines(stories)).toEqual(expected);
  });

  it.each<[string, Story[], typeof options]>([
    [
      'half of the files exactly',
      [story('half', { owns: ['src', 'docs', 'README.md'] })],
      {
        ...options,
        files: files.slice(0, 40).concat(Array.from({ length: 40 }, (_, i) => `x/${i}`)),
      },
    ],
    [
      'a folder holding most files of a small repository',
      [story('a', { owns: ['src'] })],
      { ...options, files: ['README.md', 'src/a.ts', 'src/b.ts'] },
    ],
    [
      'a read of a path another story creates',
      [
        story('a', { owns: ['src/new'] }),
        story('b', { reads: ['src/new/api.ts'], dependsOn: ['a'] }),
      ],
      options,
    ],
    ['a read of the whole repository', [story('a', { reads: ['.'], owns: ['src/x'] })], options],
    [
      'a chain of four stories',
      ['a', 'b', 'c', 'd'].map((id, i, all) =>
        story(id, i === 0 ? {} : { dependsOn: [all[i - 1] as string] }),
      ),
      options,
    ],
    ['exactly maxStories stories', ['a', 'b', 'c', 'd'].map((id) => story(id)), options],
  ])('does not report %s', (_name, stories, opts) => {
    expect(lines(stories, opts)).toEqual([]);
  });

  it('has a stable code for each finding, in a fixed order', () => {
    expect(QUALITY_CODES).toEqual([
      'too-many-stories-for-config',
      'unknown-executor',
      'broad-owns',
      'unknown-read',
      'no-acceptance',
      'no-parallelism',
    ]);
  });

  it('judges owns against 100,000 files without comparing every pair', () => {
    const big = Array.from({ length: 100_000 }, (_, i) => `pkg/m${i % 100}/f${i}.ts`);
    const stories = Array.from({ length: 30 }, (_, i) =>
      story(`s${i}`, { owns: [`pkg/m${i}`], reads: [`pkg/m${i + 50}`] }),
    );
    expect(lines(stories, { files: big, maxStories: 30, coders: [] })).toEqual([]);
  });
});
