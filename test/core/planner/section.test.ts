import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Story } from '../../../src/core/model.js';
import { parsePlan } from '../../../src/core/plan/index.js';
import {
  PLAN_SECTION_END,
  PLAN_SECTION_START,
  proseOf,
  renderPlanBlock,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
} from '../../../src/core/planner/index.js';
import { plan, story } from './fixtures.js';

const stories = [
  story('api', {
    title: 'Add the API | with <b>html</b> for @alice',
    owns: ['src/api', 'test/api.test.ts'],
    reads: ['src/server.ts'],
    provides: ['GET /health: 200'],
    description: 'Line one.\nLine two: with a colon.',
  }),
  story('ui', { owns: ['src/ui'], dependsOn: ['api'], acceptance: [], executor: 'claude' }),
  story('docs', { owns: ['docs/we`ird|path.md'], testsChange: true }),
];

describe('renderPlanBlock', () => {
  it('writes a block that parses back to the same stories and hashes', () => {
    const p = plan(stories);
    const parsed = parsePlan(renderPlanBlock(p.stories));
    expect(parsed.ok && parsed.plan.hashes).toEqual(p.hashes);
    expect(parsed.ok && parsed.plan.stories).toEqual(p.stories);
  });

  it('leaves defaults out and keeps path lists on one line', () => {
    const block = renderPlanBlock([story('a', { acceptance: [] })]);
    expect(block).toBe(
      '```epicflow\nstories:\n  - id: a\n    title: Story a\n    description: Build a.\n    owns: [src/a]\n```',
    );
  });

  const text = fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim() !== '');
  const line = text.map((s) => s.replace(/[\r\n]/g, ' ')).filter((s) => s.trim() !== '');
  const segment = fc
    .stringMatching(/^[A-Za-z0-9_. @#:-]{1,12}$/)
    .filter((s) => s !== '.' && s !== '..' && s.trim() === s && s.toLowerCase() !== '.git');
  const path = fc.array(segment, { minLength: 1, maxLength: 3 }).map((p) => p.join('/'));

  it('round-trips any valid stories (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            title: line,
            description: text,
            owns: fc.array(path, { minLength: 1, maxLength: 3 }),
            acceptance: fc.array(text, { maxLength: 2 }),
            provides: fc.array(line, { maxLength: 2 }),
            testsChange: fc.boolean(),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        (entries) => {
          const built: Story[] = entries.map((e, i) =>
            story(`s${i}`, {
              ...e,
              title: e.title.trim(),
              description: e.description.trim() === '' ? 'x' : e.description.trim(),
              owns: e.owns.map((o) => `s${i}/${o}`),
              dependsOn: i > 0 ? [`s${i - 1}`] : [],
            }),
          );
          const p = plan(built);
          const parsed = parsePlan(renderPlanBlock(p.stories));
          if (!parsed.ok) throw new Error(parsed.violations.map((v) => v.message).join('\n'));
          expect(parsed.plan.hashes).toEqual(p.hashes);
        },
      ),
    );
  });
});

describe('renderPlanSection', () => {
  const section = renderPlanSection({
    plan: plan(stories),
    warnings: [
      {
        code: 'no-acceptance',
        message: 'story "ui": no acceptance criteria, ask @bob',
        story: 'ui',
        mustFix: false,
      },
    ],
    note: 'Run it with `epicflow run epic.plan.md`.',
  });

  it('is marked, and holds the heading, note, table, graph, warnings and block in that order', () => {
    const lines = section.split('\n');
    expect(lines[0]).toBe(PLAN_SECTION_START);
    expect(lines.at(-1)).toBe(PLAN_SECTION_END);
    const at = (text: string): number => section.indexOf(text);
    expect(at('## Plan: 3 stories in 2 waves')).toBeGreaterThan(0);
    expect(at('Run it with `epicflow run epic.plan.md`.')).toBeGreaterThan(at('## Plan'));
    expect(at('| Story | Depends on | Owns | Reads | Wave |')).toBeGreaterThan(at('Run it'));
    expect(at('```mermaid')).toBeGreaterThan(at('| Story'));
    expect(at('**Warnings**')).toBeGreaterThan(at('```mermaid'));
    expect(at('```epicflow')).toBeGreaterThan(at('**Warnings**'));
  });

  it("shows dependencies, perimeters and waves, with the planner's text made inert", () => {
    expect(section).toContain(
      '| `api` Add the API \\| with &lt;b&gt;html&lt;/b&gt; for `@alice` | — | `src/api`, `test/api.test.ts` | `src/server.ts` | 1 |',
    );
    expect(section).toContain('| `ui` Story ui | `api` | `src/ui` | — | 2 |');
    expect(section).toContain('| `docs` Story docs | — | `` docs/we`ird\\|path.md `` | — | 1 |');
    expect(section).toContain('- `no-acceptance`: story "ui": no acceptance criteria, ask `@bob`');
    expect(section).toContain('  s0 --> s1');
  });

  it('makes a document whose plan is the one rendered', () => {
    const doc = withPlanSection('# Epic\n\nSome prose.\n', section);
    const parsed = parsePlan(doc);
    expect(parsed.ok && parsed.plan.hashes).toEqual(plan(stories).hashes);
  });

  it('drops the graph, then the table, to stay within maxChars, never the block', () => {
    const full = renderPlanSection({ plan: plan(stories) });
    const noGraph = renderPlanSection({ plan: plan(stories), maxChars: full.length - 1 });
    expect(noGraph).not.toContain('```mermaid');
    expect(noGraph).toContain('| Story |');
    expect(noGraph).toContain('_Graph left out to keep the plan within its size limit._');
    const noTable = renderPlanSection({ plan: plan(stories), maxChars: noGraph.length - 1 });
    expect(noTable).not.toContain('| Story |');
    expect(noTable).toContain('```epicflow');
    const tiny = renderPlanSection({ plan: plan(stories), maxChars: 10 });
    expect(tiny).toBe(noTable);
    expect(parsePlan(tiny).ok).toBe(true);
  });
});

describe('the section in a document', () => {
  const section = `${PLAN_SECTION_START}\nplan\n${PLAN_SECTION_END}`;

  it.each<[string, string, string]>([
    ['appends a section below the prose', '# Epic\n\nProse.\n', `# Epic\n\nProse.\n\n${section}\n`],
    ['writes the section alone into an empty body', '', `${section}\n`],
    [
      'replaces an existing section, keeping the text around it',
      `Prose.\n\n${PLAN_SECTION_START}\nold\n${PLAN_SECTION_END}\n\nAfterword.\n`,
      `Prose.\n\n${section}\n\nAfterword.\n`,
    ],
    [
      'replaces a section whose end marker was deleted, to the end of the text',
      `Prose.\n${PLAN_SECTION_START}\nold\nmore old\n`,
      `Prose.\n\n${section}\n`,
    ],
  ])('%s', (_name, before, after) => {
    expect(withPlanSection(before, section)).toBe(after);
    expect(withPlanSection(after, section)).toBe(after);
  });

  it('gives the prose without the section', () => {
    expect(proseOf(`Intro.\n\n${section}\n\nOutro.\n`)).toBe('Intro.\n\nOutro.');
    expect(proseOf('Only prose.\n')).toBe('Only prose.');
    expect(splitPlanSection('x').section).toBeUndefined();
  });

  it('only counts markers alone on their line', () => {
    const quoted = `Write \`${PLAN_SECTION_START}\` to start one.\n`;
    expect(splitPlanSection(quoted).section).toBeUndefined();
  });
});
