import { describe, expect, it } from '@jest/globals';
import { assemblePlan, parseStoryBlock } from '../../../src/core/plan/index.js';
import type { Story } from '../../../src/core/model.js';

function subIssue(yaml: string): string {
  return `Part of the epic.\n\n\`\`\`epicflow\n${yaml}\n\`\`\`\n`;
}

function storyOf(markdown: string, defaultId: string): Story {
  const result = parseStoryBlock(markdown, defaultId);
  if (!result.ok) throw new Error(JSON.stringify(result.violations));
  return result.story;
}

describe('parseStoryBlock', () => {
  it('reads one story mapping, with the id defaulting to the issue', () => {
    const story = storyOf(
      subIssue('title: Add the DB layer\ndescription: Tables.\nowns: [./src/db/]'),
      'issue-12',
    );
    expect(story).toEqual({
      id: 'issue-12',
      title: 'Add the DB layer',
      description: 'Tables.',
      owns: ['src/db'],
      reads: [],
      dependsOn: [],
      provides: [],
      acceptance: [],
      testsChange: false,
    });
  });

  it('keeps an id written in the block', () => {
    const story = storyOf(subIssue('id: db\ntitle: T\ndescription: D\nowns: [src/db]'), 'issue-12');
    expect(story.id).toBe('db');
  });

  it('reports the story violations it can see alone', () => {
    const result = parseStoryBlock(
      subIssue('title: T\nowns: [../x]\ndependsOn: [issue-3]'),
      'issue-3',
    );
    expect(result.violations.map((v) => [v.code, v.message])).toEqual([
      ['schema', 'story "issue-3": missing required field "description"'],
      ['unsafe-path', 'story "issue-3": owns path "../x" contains a ".." segment'],
      ['self-dependency', 'story "issue-3": dependsOn names the story itself'],
    ]);
  });

  it('gives the markdown line of a field', () => {
    const result = parseStoryBlock(subIssue('title: T\ndescription: D\nowns: []'), 'issue-4');
    expect(result.violations).toEqual([
      {
        code: 'empty-owns',
        message: 'story "issue-4": "owns" is empty; a story must own at least one path',
        story: 'issue-4',
        field: 'owns',
        line: 6,
      },
    ]);
  });

  it('needs exactly one block holding a mapping', () => {
    expect(parseStoryBlock('no block here', 'issue-1').violations[0]?.code).toBe('no-plan-block');
    expect(parseStoryBlock(subIssue('- a'), 'issue-1').violations).toEqual([
      { code: 'schema', message: 'the story block must be a mapping of story fields, got a list' },
    ]);
  });
});

describe('assemblePlan', () => {
  const db = storyOf(subIssue('title: DB\ndescription: D\nowns: [src/db]'), 'issue-12');
  const api = storyOf(subIssue('title: API\ndescription: A\nowns: [src/api]'), 'issue-13');
  const ui = storyOf(
    subIssue('title: UI\ndescription: U\nowns: [src/ui]\ndependsOn: [issue-13]'),
    'issue-14',
  );

  it('adds "blocked by" relations to dependsOn and computes waves', () => {
    const result = assemblePlan([db, api, ui], {
      'issue-13': ['issue-12'],
      'issue-14': ['issue-13'],
    });
    if (!result.ok) throw new Error(JSON.stringify(result.violations));
    expect(result.plan.waves).toEqual([['issue-12'], ['issue-13'], ['issue-14']]);
    expect(result.plan.stories.map((s) => s.dependsOn)).toEqual([[], ['issue-12'], ['issue-13']]);
  });

  it('runs the checks across stories', () => {
    const result = assemblePlan([db, { ...api, owns: ['src'] }], {
      'issue-12': ['issue-13'],
      'issue-13': ['issue-12', 'issue-99'],
    });
    expect(result.violations.map((v) => [v.code, v.message])).toEqual([
      ['unknown-dependency', 'story "issue-13": dependsOn "issue-99" names no story'],
      ['cycle', 'issue-12 -> issue-13 -> issue-12'],
      [
        'owns-overlap',
        'stories "issue-12" and "issue-13" own overlapping paths "src/db" and "src"',
      ],
    ]);
  });

  it('reports an empty set of stories', () => {
    expect(assemblePlan([]).violations).toEqual([
      { code: 'schema', message: 'the plan has no stories' },
    ]);
  });
});
