import { describe, expect, it } from '@jest/globals';
import { parsePlan, storyHash } from '../../../src/core/plan/index.js';
import type { PlanResult, ViolationCode } from '../../../src/core/plan/index.js';

/** Wraps YAML in an epicflow fence, after one line of prose (so YAML line n is markdown line n + 2). */
function plan(yaml: string): string {
  return `Prose for people.\n\`\`\`epicflow\n${yaml}\n\`\`\`\n`;
}

/** A valid story entry in YAML, with extra lines appended. */
function story(id: string, owns: string, ...extra: string[]): string {
  return [
    `  - id: ${id}`,
    `    title: Story ${id}`,
    `    description: Build ${id}.`,
    `    owns: ${owns}`,
    ...extra.map((line) => `    ${line}`),
  ].join('\n');
}

function stories(...entries: string[]): string {
  return plan(`stories:\n${entries.join('\n')}`);
}

function violations(result: PlanResult): { code: ViolationCode; message: string }[] {
  return result.violations.map((v) => ({ code: v.code, message: v.message }));
}

const SPEC_EXAMPLE = `Add a health endpoint.

\`\`\`epicflow
stories:
  - id: health-endpoint
    title: Add a health endpoint
    description: |
      Serve GET /health returning {"status":"ok"} with HTTP 200.
    owns: [src/health.ts, test/health.test.ts]
    reads: [src/server.ts]
    provides: ["GET /health"]
    acceptance: ["GET /health answers 200 with status ok"]
  - id: wire-health
    title: Register the health route
    description: Mount the health handler in the server.
    dependsOn: [health-endpoint]
    owns: [src/server.ts]
    executor: claude
\`\`\`
`;

describe('parsePlan on a valid plan', () => {
  it('builds stories with defaults, waves and hashes', () => {
    const result = parsePlan(SPEC_EXAMPLE);
    if (!result.ok) throw new Error(JSON.stringify(result.violations));
    expect(result.plan.stories).toEqual([
      {
        id: 'health-endpoint',
        title: 'Add a health endpoint',
        description: 'Serve GET /health returning {"status":"ok"} with HTTP 200.',
        owns: ['src/health.ts', 'test/health.test.ts'],
        reads: ['src/server.ts'],
        dependsOn: [],
        provides: ['GET /health'],
        acceptance: ['GET /health answers 200 with status ok'],
        testsChange: false,
      },
      {
        id: 'wire-health',
        title: 'Register the health route',
        description: 'Mount the health handler in the server.',
        owns: ['src/server.ts'],
        reads: [],
        dependsOn: ['health-endpoint'],
        provides: [],
        acceptance: [],
        executor: 'claude',
        testsChange: false,
      },
    ]);
    expect(result.plan.waves).toEqual([['health-endpoint'], ['wire-health']]);
    const [first, second] = result.plan.stories;
    if (!first || !second) throw new Error('two stories expected');
    expect(result.plan.hashes).toEqual({
      'health-endpoint': storyHash(first),
      'wire-health': storyHash(second),
    });
    expect(result.plan.hashes['health-endpoint']).toMatch(/^[0-9a-f]{16}$/);
  });

  it('normalises owned and read paths', () => {
    const result = parsePlan(
      stories(story('a', '["./src/a/", "src\\\\win", " docs "]', 'reads: ["./lib/"]')),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.violations));
    expect(result.plan.stories[0]?.owns).toEqual(['src/a', 'src/win', 'docs']);
    expect(result.plan.stories[0]?.reads).toEqual(['lib']);
  });

  it('accepts src/api and src/api-client owned by two stories', () => {
    const result = parsePlan(stories(story('a', '[src/api]'), story('b', '[src/api-client]')));
    expect(violations(result)).toEqual([]);
  });

  it('lets stories own workflows when the config allows it', () => {
    const md = stories(story('ci', '[.github/workflows/ci.yml, .github/epicflow.yml]'));
    expect(parsePlan(md).ok).toBe(false);
    expect(parsePlan(md, { allowWorkflowChanges: true }).ok).toBe(true);
  });

  it('protects the config file it is told about', () => {
    const md = stories(story('cfg', '[ci/epicflow.yml]'));
    expect(parsePlan(md).ok).toBe(true);
    expect(violations(parsePlan(md, { configPaths: ['ci/epicflow.yml'] }))).toEqual([
      {
        code: 'protected-path',
        message:
          'story "cfg": owns "ci/epicflow.yml", a protected path (files under .github/ and the epicflow config change only with allowWorkflowChanges: true)',
      },
    ]);
  });
});

const manyStories = Array.from({ length: 101 }, (_, i) => story(`s${i}`, `[src/s${i}]`));

describe('parsePlan violations, one code at a time', () => {
  it.each<[string, string, ViolationCode, string]>([
    [
      'no block',
      'Just prose.\n```yaml\nstories: []\n```\n',
      'no-plan-block',
      'no ```epicflow block found: put the plan in a fenced code block whose info string is epicflow',
    ],
    [
      'two blocks',
      '```epicflow\na: 1\n```\n\n```epicflow\nb: 2\n```\n',
      'multiple-plan-blocks',
      'found 2 ```epicflow blocks (opening on lines 1, 5); a plan has exactly one',
    ],
    [
      'bad YAML',
      plan('stories:\n  - id: a\n    owns: [x\n  - id: b'),
      'yaml',
      'line 6: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ],
    ['duplicate key', plan('stories: []\nstories: []'), 'yaml', 'line 4: Map keys must be unique'],
    [
      'unknown field',
      stories(story('wire-health', '[src]', 'dependOn: [x]')),
      'schema',
      'story "wire-health": unknown field "dependOn" (did you mean "dependsOn"?)',
    ],
    [
      "another tool's word for a field",
      stories(story('wire-health', '[src]', 'needs: [x]')),
      'schema',
      'story "wire-health": unknown field "needs" (did you mean "dependsOn"?)',
    ],
    [
      'unknown top-level field',
      plan(`stories:\n${story('a', '[src]')}\nepic: x`),
      'schema',
      'unknown top-level field "epic"',
    ],
    [
      'missing field',
      plan('stories:\n  - id: a\n    title: A\n    owns: [src]'),
      'schema',
      'story "a": missing required field "description"',
    ],
    [
      'wrong type',
      stories(story('a', 'src')),
      'schema',
      'story "a": field "owns" must be a list, got a string',
    ],
    [
      'wrong item type',
      stories(story('a', '[src, 3]')),
      'schema',
      'story "a": field "owns" item 2 must be a string, got a number',
    ],
    [
      'wrong boolean',
      stories(story('a', '[src]', 'testsChange: "yes"')),
      'schema',
      'story "a": field "testsChange" must be true or false, got a string',
    ],
    [
      'multi-line title',
      plan('stories:\n  - id: a\n    title: "one\\ntwo"\n    description: d\n    owns: [src]'),
      'schema',
      'story "a": field "title" must be one line',
    ],
    [
      'story not a mapping',
      plan('stories:\n  - just-a-name'),
      'schema',
      'story #1: expected a mapping of story fields, got a string',
    ],
    ['stories missing', plan('{}'), 'schema', 'missing required field "stories"'],
    [
      'stories empty',
      plan('stories: []'),
      'schema',
      'field "stories" is empty: list at least one story',
    ],
    [
      'stories not a list',
      plan('stories: {a: 1}'),
      'schema',
      'field "stories" must be a list, got a mapping',
    ],
    [
      'empty block',
      plan(''),
      'schema',
      'the plan must be a mapping with a "stories" list, got an empty block',
    ],
    [
      'block is a list',
      plan('- a\n- b'),
      'schema',
      'the plan must be a mapping with a "stories" list, got a list',
    ],
    [
      '101 stories',
      stories(...manyStories),
      'too-many-stories',
      'the plan has 101 stories; at most 100 are allowed (GitHub allows 100 sub-issues per epic)',
    ],
    [
      'id not kebab-case',
      stories(story('Wire_Health', '[src]')),
      'invalid-id',
      'story "Wire_Health": id must be kebab-case (lowercase letters, digits and "-", starting with a letter or digit)',
    ],
    [
      'id starting with a dash',
      stories(story('-a', '[src]')),
      'invalid-id',
      'story "-a": id must be kebab-case (lowercase letters, digits and "-", starting with a letter or digit)',
    ],
    [
      'id too long',
      stories(story('a'.repeat(49), '[src]')),
      'invalid-id',
      `story "${'a'.repeat(49)}": id is 49 characters long; at most 48 are allowed`,
    ],
    [
      'duplicate id',
      stories(story('a', '[src/a]'), story('a', '[src/b]')),
      'duplicate-id',
      'story "a": id is used by 2 stories (#1, #2)',
    ],
    [
      'empty owns',
      stories(story('a', '[]')),
      'empty-owns',
      'story "a": "owns" is empty; a story must own at least one path',
    ],
    [
      'dot-dot path',
      stories(story('a', '[src/../etc]')),
      'unsafe-path',
      'story "a": owns path "src/../etc" contains a ".." segment',
    ],
    [
      'absolute path',
      stories(story('a', '[/etc]')),
      'unsafe-path',
      'story "a": owns path "/etc" is absolute',
    ],
    [
      'drive letter',
      stories(story('a', '["C:\\\\src"]')),
      'unsafe-path',
      'story "a": owns path "C:\\\\src" starts with a drive letter',
    ],
    [
      'glob',
      stories(story('a', '["src/**/*.ts"]')),
      'unsafe-path',
      'story "a": owns path "src/**/*.ts" contains a glob character (paths are prefixes, not globs)',
    ],
    [
      '.git',
      stories(story('a', '[.git/hooks]')),
      'unsafe-path',
      'story "a": owns path ".git/hooks" is inside .git',
    ],
    [
      'empty path',
      stories(story('a', '[src]', 'reads: [" "]')),
      'unsafe-path',
      'story "a": reads path " " is empty',
    ],
    [
      'control character',
      stories(story('a', '["src/a\\u0007"]')),
      'unsafe-path',
      'story "a": owns path "src/a\\u0007" contains a control character',
    ],
    [
      'workflow',
      stories(story('a', '[.github/workflows/ci.yml]')),
      'protected-path',
      'story "a": owns ".github/workflows/ci.yml", a protected path (files under .github/ and the epicflow config change only with allowWorkflowChanges: true)',
    ],
    [
      'config file',
      stories(story('a', '[.github/epicflow.yml]')),
      'protected-path',
      'story "a": owns ".github/epicflow.yml", a protected path (files under .github/ and the epicflow config change only with allowWorkflowChanges: true)',
    ],
    [
      'self dependency',
      stories(story('a', '[src]', 'dependsOn: [a]')),
      'self-dependency',
      'story "a": dependsOn names the story itself',
    ],
    [
      'unknown dependency',
      stories(story('a', '[src]', 'dependsOn: [nope]')),
      'unknown-dependency',
      'story "a": dependsOn "nope" names no story',
    ],
    [
      'two-story cycle',
      stories(story('a', '[src/a]', 'dependsOn: [b]'), story('b', '[src/b]', 'dependsOn: [a]')),
      'cycle',
      'a -> b -> a',
    ],
    [
      'three-story cycle',
      stories(
        story('a', '[src/a]', 'dependsOn: [c]'),
        story('b', '[src/b]', 'dependsOn: [a]'),
        story('c', '[src/c]', 'dependsOn: [b]'),
      ),
      'cycle',
      'a -> c -> b -> a',
    ],
    [
      'same path owned twice',
      stories(story('a', '[src]'), story('b', '[./src/]')),
      'owns-overlap',
      'stories "a" and "b" both own "src"',
    ],
    [
      'nested paths owned',
      stories(story('a', '[src/api/v1]'), story('b', '[src/api]')),
      'owns-overlap',
      'stories "a" and "b" own overlapping paths "src/api/v1" and "src/api"',
    ],
    [
      'whole repo owned',
      stories(story('a', '[.]'), story('b', '[docs]')),
      'owns-overlap',
      'stories "a" and "b" own overlapping paths "." and "docs"',
    ],
    [
      'owns and reads',
      stories(story('a', '[src/api]', 'reads: [src]')),
      'owns-reads-overlap',
      'story "a": owns "src/api" and reads "src", which overlap (a path is either owned or read)',
    ],
  ])('%s', (_name, markdown, code, message) => {
    expect(violations(parsePlan(markdown))).toEqual([{ code, message }]);
  });
});

describe('parsePlan reports everything in one pass', () => {
  it('lists violations of different stories and kinds together', () => {
    const md = stories(
      story('api', '[src/api]', 'dependsOn: [ui]'),
      story('ui', '[src/api/ui]', 'dependsOn: [api, ghost]', 'colour: blue'),
      story('Docs', '[]'),
    );
    expect(violations(parsePlan(md))).toEqual([
      { code: 'schema', message: 'story "ui": unknown field "colour"' },
      {
        code: 'invalid-id',
        message:
          'story "Docs": id must be kebab-case (lowercase letters, digits and "-", starting with a letter or digit)',
      },
      {
        code: 'empty-owns',
        message: 'story "Docs": "owns" is empty; a story must own at least one path',
      },
      { code: 'unknown-dependency', message: 'story "ui": dependsOn "ghost" names no story' },
      { code: 'cycle', message: 'api -> ui -> api' },
      {
        code: 'owns-overlap',
        message: 'stories "api" and "ui" own overlapping paths "src/api" and "src/api/ui"',
      },
    ]);
  });

  it('still sees overlaps and dependencies next to malformed values', () => {
    const md = plan(
      [
        'stories:',
        story('a', '[src, 5]', 'dependsOn: [b, {x: 1}]'),
        '  - title: No id',
        '    description: d',
        '    owns: [src/b]',
        story('b', '[lib]', 'dependsOn: [a]'),
      ].join('\n'),
    );
    expect(violations(parsePlan(md))).toEqual([
      { code: 'schema', message: 'story "a": field "owns" item 2 must be a string, got a number' },
      {
        code: 'schema',
        message: 'story "a": field "dependsOn" item 2 must be a string, got a mapping',
      },
      { code: 'schema', message: 'story #2: missing required field "id"' },
      { code: 'cycle', message: 'a -> b -> a' },
      {
        code: 'owns-overlap',
        message: 'stories "a" and #2 own overlapping paths "src" and "src/b"',
      },
    ]);
  });

  it('reports each distinct cycle once', () => {
    const md = stories(
      story('a', '[src/a]', 'dependsOn: [b]'),
      story('b', '[src/b]', 'dependsOn: [a]'),
      story('c', '[src/c]', 'dependsOn: [d]'),
      story('d', '[src/d]', 'dependsOn: [c, a]'),
    );
    expect(violations(parsePlan(md))).toEqual([
      { code: 'cycle', message: 'a -> b -> a' },
      { code: 'cycle', message: 'c -> d -> c' },
    ]);
  });

  it('gives YAML violations the line in the markdown file', () => {
    const result = parsePlan('# Title\n\ntext\n```epicflow\nstories:\n  - id: [\n```\n');
    expect(result.violations[0]).toMatchObject({ code: 'yaml', line: 6 });
    expect(result.violations[0]?.message).toMatch(/^line 6: /);
  });

  it('locates story violations and names the story and field', () => {
    const md = stories(story('a', '[src]'), story('b', '[src/b]', 'dependsOn: [nope]'));
    const result = parsePlan(md);
    expect(result.violations).toEqual([
      {
        code: 'unknown-dependency',
        message: 'story "b": dependsOn "nope" names no story',
        story: 'b',
        field: 'dependsOn',
        line: 12,
      },
      {
        code: 'owns-overlap',
        message: 'stories "a" and "b" own overlapping paths "src" and "src/b"',
        story: 'a',
        field: 'owns',
        line: 11,
      },
    ]);
  });

  it('counts story entries in an invalid plan', () => {
    const result = parsePlan(stories(story('a', '[src]'), story('b', '[src]')));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.storyCount).toBe(2);
  });
});
