/**
 * The plan section: what epicflow writes below an epic's prose once a plan is
 * drafted, between two HTML comment markers — a preview for people (a table of
 * the stories with their dependencies and perimeters, the Mermaid graph, the
 * quality warnings) and then the ` ```epicflow ` block itself. `plan draft`
 * writes it into the plan file and the GitHub side into the issue body, with
 * this one renderer; everything outside the markers is the author's.
 */
import { PLAN_SECTION_END, PLAN_SECTION_START } from '../epic/markers.js';
import { neutralizeMentions } from '../epic/sanitize.js';
import type { Plan } from '../model.js';
import { capText, cellText, code, inlineText } from '../report/escape.js';
import { buildMermaid, mermaidFits } from '../report/mermaid.js';
import type { QualityWarning } from './quality.js';
import { renderPlanBlock } from './render.js';

export { PLAN_SECTION_END, PLAN_SECTION_START };

const TITLE_MAX = 80;
/** Paths listed per cell; the rest are counted. */
const PATHS_PER_CELL = 6;

interface PlanSectionInput {
  readonly plan: Plan;
  /** Quality warnings of the plan (shown so the approver sees them). */
  readonly warnings?: readonly QualityWarning[];
  /** One line of epicflow's own markdown under the heading, e.g. what to do next. */
  readonly note?: string;
  /**
   * Upper bound on the section's length. When it would be longer, the graph
   * goes first, then the table; the block is never shortened.
   */
  readonly maxChars?: number;
}

/** A code span for a path, whatever backticks it holds; `|` escaped for table cells. */
function pathSpan(p: string): string {
  const longest = Math.max(0, ...Array.from(p.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = longest > 0 ? ' ' : '';
  return `${fence}${pad}${p}${pad}${fence}`.replace(/\|/g, '\\|');
}

function pathsCell(paths: readonly string[]): string {
  if (paths.length === 0) return '—';
  const shown = paths.slice(0, PATHS_PER_CELL).map(pathSpan);
  if (paths.length > PATHS_PER_CELL) shown.push(`+${paths.length - PATHS_PER_CELL} more`);
  return shown.join(', ');
}

/** Text the planner wrote, for a table cell: one line, no HTML, no mentions, `|` escaped. */
function plannerText(text: string, max: number): string {
  return cellText(neutralizeMentions(capText(text.replace(/\s+/g, ' ').trim(), max)));
}

function table(plan: Plan): string {
  const wave = new Map<string, number>();
  plan.waves.forEach((ids, i) => ids.forEach((id) => wave.set(id, i + 1)));
  const rows = plan.stories.map((s) => {
    const deps = s.dependsOn.length === 0 ? '—' : s.dependsOn.map(code).join(', ');
    return `| ${code(s.id)} ${plannerText(s.title, TITLE_MAX)} | ${deps} | ${pathsCell(s.owns)} | ${pathsCell(s.reads)} | ${wave.get(s.id) ?? '—'} |`;
  });
  return [
    '| Story | Depends on | Owns | Reads | Wave |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

function warningsList(warnings: readonly QualityWarning[]): string {
  return [
    '**Warnings** (the plan is valid; check these before you run it):',
    ...warnings.map((w) => `- ${code(w.code)}: ${neutralizeMentions(inlineText(w.message))}`),
  ].join('\n');
}

/** `1 story in 1 wave`, `3 stories in 2 waves`. */
function countText(plan: Plan): string {
  const n = plan.stories.length;
  const w = plan.waves.length;
  return `${n} ${n === 1 ? 'story' : 'stories'} in ${w} ${w === 1 ? 'wave' : 'waves'}`;
}

/** The marked section: heading, note, table, graph, warnings, then the block. */
export function renderPlanSection(input: PlanSectionInput): string {
  const { plan } = input;
  const heading = `## Plan: ${countText(plan)}`;
  const head = [
    heading,
    ...(input.note === undefined ? [] : [input.note.replace(/\s+/g, ' ').trim()]),
  ];
  const graph = buildMermaid(plan.stories.map((story) => ({ story, wave: 0 })));
  const warnings =
    input.warnings === undefined || input.warnings.length === 0
      ? []
      : [warningsList(input.warnings)];
  const block = renderPlanBlock(plan.stories);
  const compose = (parts: readonly string[]): string =>
    [
      PLAN_SECTION_START,
      [...head, ...parts, ...warnings, block].join('\n\n'),
      PLAN_SECTION_END,
    ].join('\n');

  const withGraph = mermaidFits(graph) ? [table(plan), graph.text] : [table(plan)];
  const layouts: (readonly string[])[] = [
    withGraph,
    [table(plan), '_Graph left out to keep the plan within its size limit._'],
    ['_Preview left out to keep the plan within its size limit: the block below is the plan._'],
  ];
  const max = input.maxChars ?? Infinity;
  for (const parts of layouts) {
    const text = compose(parts);
    if (text.length <= max) return text;
  }
  return compose(layouts[layouts.length - 1] ?? []);
}

interface SplitSection {
  /** The text before the section (all of it when there is none). */
  readonly before: string;
  /** The section, markers included; undefined when there is none. */
  readonly section?: string;
  /** The text after the section. */
  readonly after: string;
}

function isMarker(line: string, marker: string): boolean {
  return line.trim() === marker;
}

/**
 * Finds the plan section: from a line holding only the start marker to the
 * next line holding only the end marker (or the end of the text, when someone
 * deleted that marker).
 */
export function splitPlanSection(markdown: string): SplitSection {
  const lines = markdown.split(/\r\n|\r|\n/);
  const start = lines.findIndex((l) => isMarker(l, PLAN_SECTION_START));
  if (start === -1) return { before: markdown, after: '' };
  const rel = lines.slice(start + 1).findIndex((l) => isMarker(l, PLAN_SECTION_END));
  const end = rel === -1 ? lines.length - 1 : start + 1 + rel;
  return {
    before: lines.slice(0, start).join('\n'),
    section: lines.slice(start, end + 1).join('\n'),
    after: lines.slice(end + 1).join('\n'),
  };
}

/** The author's prose: the text without the plan section. */
export function proseOf(markdown: string): string {
  const { before, after } = splitPlanSection(markdown);
  return [before.trimEnd(), after.trim()].filter((p) => p !== '').join('\n\n');
}

/**
 * The text with its plan section replaced by `section`, or with `section`
 * appended below the prose when it has none. Text around the section is kept.
 */
export function withPlanSection(markdown: string, section: string): string {
  const split = splitPlanSection(markdown);
  if (split.section === undefined) {
    const prose = markdown.trimEnd();
    return `${prose === '' ? '' : `${prose}\n\n`}${section}\n`;
  }
  const before = split.before.trimEnd();
  const after = split.after.trim();
  return `${before === '' ? '' : `${before}\n\n`}${section}\n${after === '' ? '' : `\n${after}\n`}`;
}
