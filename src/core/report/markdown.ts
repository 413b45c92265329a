/**
 * The epic report as markdown: for `report.md`, the epic PR
 * comment and the issue summary. The body never exceeds `maxChars`: when it
 * would, per-story detail is dropped step by step (shorter table, then no
 * graph) and a note says what is missing and where the full report is.
 * Blocks (fences, tables, lists) are only ever dropped whole, so the markdown
 * stays valid.
 */
import type { HaltKind, StoryStatus } from '../model.js';
import { EpicflowError } from '../errors.js';
import { formatChain } from '../model.js';
import { capText, cellText, code, figureCell, inlineText, link } from './escape.js';
import { formatDuration, formatTokens, formatUsd, formatUtcTime, parseIsoTime } from './format.js';
import type { MermaidGraph } from './mermaid.js';
import { buildMermaid, mermaidFits } from './mermaid.js';
import type { ExecutorSummary, StatusCounts, UsageFigure, UsageSummary } from './summary.js';
import {
  allUsage,
  countStatuses,
  isEmptyUsage,
  statusOf,
  summarizeExecutors,
  summarizeUsage,
} from './summary.js';
import type { ReportInput, ReportLanding, ReportOptions, ReportStory } from './types.js';

/** GitHub's limit on an issue or pull-request comment body. */
export const GITHUB_BODY_MAX = 65_536;
/** Below this many table rows, the graph goes before more rows do. */
const MIN_ROWS_WITH_GRAPH = 20;
/** Finished stories listed per executor once the report is being shortened. */
const FINISHED_SHORT = 10;
const TITLE_MAX = 80;
const NOTE_MAX = 300;
/** Deferred findings listed in all; the rest are counted. */
const DEFERRED_SHOWN = 50;

/** When the table is shortened, the rows people act on come first. */
const ROW_RANK: Readonly<Record<StoryStatus, number>> = {
  failed: 0,
  active: 1,
  waiting: 2,
  done: 3,
  planned: 4,
};

const HALT_LABELS: Readonly<Record<HaltKind, string>> = {
  'roster-exhausted': 'Roster exhausted',
  budget: 'Budget spent',
  cancel: 'Cancelled',
  'outside-change': 'Changed outside epicflow',
  interrupted: 'Interrupted',
  'plan-unapproved': 'Plan not approved',
  'land-failed': 'Not mergeable',
  'pr-closed': 'Pull request closed',
};

interface Facts {
  readonly input: ReportInput;
  readonly counts: StatusCounts;
  readonly totals: UsageSummary;
  readonly executors: readonly ExecutorSummary[];
  readonly graph: MermaidGraph;
  readonly rows: readonly string[];
  /** Story indices, most important first. */
  readonly priority: readonly number[];
  readonly anyEstimate: boolean;
}

interface Layout {
  readonly graph: boolean;
  /** How many story rows the table shows. */
  readonly rows: number;
  readonly shortFinished: boolean;
}

/** Renders the epic report markdown, never longer than `maxChars` (default 65,536). */
export function renderReport(input: ReportInput, options: ReportOptions = {}): string {
  const maxChars = options.maxChars ?? GITHUB_BODY_MAX;
  if (!Number.isInteger(maxChars) || maxChars < 1) {
    throw new EpicflowError(
      'internal',
      `renderReport: maxChars must be a positive integer, got ${maxChars}`,
    );
  }
  const facts = gather(input);
  const total = input.stories.length;
  const graphFits = mermaidFits(facts.graph);
  const fits = (layout: Layout): boolean => render(compose(facts, layout)).length <= maxChars;

  const full: Layout = { graph: graphFits, rows: total, shortFinished: false };
  if (fits(full)) return render(compose(facts, full));

  if (graphFits) {
    const rows = mostRows(total, (n) => fits({ graph: true, rows: n, shortFinished: true }));
    if (rows !== null && rows >= Math.min(total, MIN_ROWS_WITH_GRAPH)) {
      return render(compose(facts, { graph: true, rows, shortFinished: true }));
    }
  }
  const rows = mostRows(total, (n) => fits({ graph: false, rows: n, shortFinished: true }));
  if (rows !== null) return render(compose(facts, { graph: false, rows, shortFinished: true }));

  // Even the summary is too long (a tiny limit): keep whole leading blocks, then the note.
  const blocks = compose(facts, { graph: false, rows: 0, shortFinished: true });
  const note = blocks[blocks.length - 1] ?? '';
  const kept: string[] = [];
  for (const block of blocks.slice(0, -1)) {
    if (render([...kept, block, note]).length > maxChars) break;
    kept.push(block);
  }
  const body = render([...kept, note]);
  return body.length <= maxChars ? body : capText(note, maxChars);
}

function render(blocks: readonly string[]): string {
  return `${blocks.join('\n\n')}\n`;
}

/** The largest n in [0, total] with ok(n), or null; ok must be monotone (true up to some n). */
function mostRows(total: number, ok: (n: number) => boolean): number | null {
  if (!ok(0)) return null;
  let lo = 0;
  let hi = total;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function gather(input: ReportInput): Facts {
  const totals = summarizeUsage(allUsage(input));
  const priority = input.stories
    .map((s, i) => ({ rank: ROW_RANK[statusOf(s)], i }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map(({ i }) => i);
  return {
    input,
    counts: countStatuses(input.stories),
    totals,
    executors: summarizeExecutors(input.stories, input.planning, input.landings),
    graph: buildMermaid(input.stories),
    rows: input.stories.map((s) => storyRow(input, s)),
    priority,
    anyEstimate: totals.estimated.tokens > 0,
  };
}

function compose(facts: Facts, layout: Layout): string[] {
  const { input, counts } = facts;
  const total = input.stories.length;
  const blocks = header(facts);
  // With no story row left, the graph and table headings would be empty shells: the note says it.
  if (layout.rows > 0 || total === 0) {
    blocks.push(...graphSection(facts, layout), ...storiesSection(facts, layout));
  }
  blocks.push(...inheritedSection(input));
  blocks.push(...deferredSection(input));
  blocks.push(...totalsSection(facts.totals));
  if (facts.executors.length > 0) blocks.push(...executorsSection(facts.executors, layout));
  blocks.push(...haltsSection(input));

  const hidden = total - layout.rows;
  const graphDropped = !layout.graph && mermaidFits(facts.graph) && counts.total > 0;
  if (hidden > 0 || graphDropped) {
    const what =
      hidden > 0 ? `${hidden} ${hidden === 1 ? 'story' : 'stories'} not shown` : 'graph not shown';
    blocks.push(
      input.fullReportUrl === undefined
        ? `… truncated: ${what}; see report.md`
        : `… truncated: ${what}. Full report: ${link(input.fullReportUrl.replace(/[[\]]/g, ''), input.fullReportUrl)}`,
    );
  }
  return blocks;
}

/** The header line of the time since the epic started (its only text that moves with the clock). */
export const ELAPSED = '- Elapsed:';

function header({ input, counts }: Facts): string[] {
  const title = input.title === undefined ? '' : `: ${inlineText(capText(input.title, 200))}`;
  const meta = [
    `- Epic branch: ${branchRef(input, input.epicBranch)}`,
    `- Stories: ${counts.total} — ${counts.done} done, ${counts.failed} failed, ${counts.waiting} waiting, ${counts.active} active, ${counts.planned} planned`,
  ];
  if (input.startedAt !== undefined) {
    const elapsed = parseIsoTime(input.now, 'now') - parseIsoTime(input.startedAt, 'startedAt');
    meta.push(`${ELAPSED} ${formatDuration(elapsed)}`);
  }
  return [`# Epic ${inlineText(input.epic)}${title}`, meta.join('\n')];
}

function graphSection(facts: Facts, layout: Layout): string[] {
  if (facts.input.stories.length === 0) return [];
  if (layout.graph) return ['## Graph', facts.graph.text];
  const reason = mermaidFits(facts.graph)
    ? 'left out to keep this report within its size limit'
    : `${facts.input.stories.length} stories and ${facts.graph.edges} dependencies are more than Mermaid renders`;
  return ['## Graph', `_Graph not shown: ${reason}._`];
}

function storiesSection(facts: Facts, layout: Layout): string[] {
  const total = facts.rows.length;
  if (total === 0) return ['## Stories', '_The plan has no stories._'];
  const shown = new Set(facts.priority.slice(0, layout.rows));
  const blocks = ['## Stories'];
  if (layout.rows > 0) {
    const rows = facts.rows.filter((_, i) => shown.has(i));
    const planning = facts.input.planning === undefined ? [] : [planningRow(facts.input)];
    blocks.push(
      [
        '| Story | Status | Wave | Branch | Merge | Executor | Tokens | Cost | Note |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        ...planning,
        ...rows,
        ...(facts.input.landings ?? []).map(landingRow),
      ].join('\n'),
    );
  }
  if (layout.rows < total) {
    blocks.push(`_Showing ${layout.rows} of ${total} stories: failed, active and waiting first._`);
  }
  if (facts.anyEstimate) {
    blocks.push('_Figures marked (est.) are estimated from characters ÷ 4, not measured._');
  }
  return blocks;
}

function storyRow(input: ReportInput, { story, wave, record }: ReportStory): string {
  const status = record?.status ?? 'planned';
  const usage = summarizeUsage(record?.usage ?? []);
  const merge = record?.mergeCommit;
  const note = [...(record?.reason === undefined ? [] : [record.reason]), ...(record?.notes ?? [])];
  const cells = [
    `${code(story.id)} ${cellText(capText(story.title, TITLE_MAX))}`,
    status,
    String(wave),
    record === undefined ? '—' : branchRef(input, record.branch),
    merge === undefined ? '—' : commitRef(input, merge),
    record === undefined || record.executors.length === 0
      ? '—'
      : cellText(formatChain(record.executors)),
    usageCell(usage, tokensText),
    usageCell(usage, costText),
    note.length === 0 ? '—' : cellText(capText(note.join('; '), NOTE_MAX)),
  ];
  return `| ${cells.join(' | ')} |`;
}

/** The Planning row: the planner's turns that drafted the plan, above the stories. */
function planningRow(input: ReportInput): string {
  const planning = input.planning;
  const usage = summarizeUsage(planning?.usage ?? []);
  const rounds = planning?.rounds;
  const cells = [
    'Planning',
    'done',
    '—',
    '—',
    '—',
    planning === undefined || planning.executors.length === 0
      ? '—'
      : cellText(formatChain(planning.executors)),
    usageCell(usage, tokensText),
    usageCell(usage, costText),
    rounds === undefined ? '—' : `${rounds} ${rounds === 1 ? 'round' : 'rounds'}`,
  ];
  return `| ${cells.join(' | ')} |`;
}

/** A Landing row below the stories: the branch brought in, who resolved it, what it cost. */
function landingRow(landing: ReportLanding): string {
  const usage = summarizeUsage(landing.usage);
  const note = [
    `${landing.rounds} ${landing.rounds === 1 ? 'round' : 'rounds'}`,
    ...(landing.conflicts.length === 0 ? [] : [`conflicts: ${landing.conflicts.join(', ')}`]),
    ...(landing.reason === undefined ? [] : [landing.reason]),
  ].join('; ');
  const cells = [
    `Landing ${code(landing.job)} into ${code(landing.into)}`,
    landing.outcome,
    '—',
    '—',
    '—',
    landing.executors.length === 0 ? '—' : cellText(formatChain(landing.executors)),
    usageCell(usage, tokensText),
    usageCell(usage, costText),
    cellText(capText(note, NOTE_MAX)),
  ];
  return `| ${cells.join(' | ')} |`;
}

/** Measured figure, estimated figure (marked), or both side by side; never summed. */
function usageCell(
  usage: UsageSummary,
  show: (f: UsageFigure, estimated: boolean) => string,
): string {
  if (isEmptyUsage(usage)) return '—';
  const parts: string[] = [];
  if (usage.measured.tokens > 0) parts.push(show(usage.measured, false));
  if (usage.estimated.tokens > 0) parts.push(`${show(usage.estimated, true)} (est.)`);
  return parts.join(' + ');
}

const tokensText = (f: UsageFigure, estimated: boolean): string =>
  `${estimated ? '~' : ''}${formatTokens(f.tokens)}`;

/** `$3.40` (`~$3.40` estimated), `unknown` when no price is known, `$1.20 + unknown` when only some are. */
function costText(f: UsageFigure, estimated: boolean): string {
  if (f.costUsd === null) return 'unknown';
  const usd = `${estimated ? '~' : ''}${formatUsd(f.costUsd)}`;
  return f.unpricedTokens > 0 ? `${usd} + unknown` : usd;
}

function figureText(f: UsageFigure, estimated: boolean): string {
  if (f.tokens === 0) return 'none';
  const cost = costText(f, estimated);
  return `${formatTokens(f.tokens)} tokens, ${cost === 'unknown' ? 'cost unknown' : cost}`;
}

function totalsSection(totals: UsageSummary): string[] {
  if (isEmptyUsage(totals)) return ['## Totals', 'No usage recorded yet.'];
  return [
    '## Totals',
    [
      `- Measured: ${figureText(totals.measured, false)}`,
      `- Estimated (characters ÷ 4): ${figureText(totals.estimated, true)}`,
    ].join('\n'),
  ];
}

function executorsSection(executors: readonly ExecutorSummary[], layout: Layout): string[] {
  const rows = executors.map(({ executor, finished, usage, planned }) => {
    const listed = layout.shortFinished ? finished.slice(0, FINISHED_SHORT) : finished;
    const names = listed.map(({ id, chain }) =>
      chain.length > 1 ? `${id} (${formatChain(chain)})` : id,
    );
    if (listed.length < finished.length)
      names.push(`… and ${finished.length - listed.length} more`);
    const count = finished.length === 0 ? '0' : `${finished.length}: ${names.join(', ')}`;
    const finishedCell = planned === true ? `${count}; planning` : count;
    return `| ${cellText(executor)} | ${cellText(finishedCell)} | ${figureCell(figureText(usage.measured, false))} | ${figureCell(figureText(usage.estimated, true))} |`;
  });
  return [
    '## By executor',
    [
      '| Executor | Stories finished | Measured | Estimated (characters ÷ 4) |',
      '| --- | --- | --- | --- |',
      ...rows,
    ].join('\n'),
  ];
}

/** Failing lines listed under one inherited gate, over all stories. */
const INHERITED_SHOWN = 20;

/**
 * Gates that were red on the base already and were tolerated, with the stories they touched
 * and, under each, the failing tests or lines that were red on the base.
 */
function inheritedSection(input: ReportInput): string[] {
  const byGate = new Map<string, { stories: string[]; lines: Set<string> }>();
  for (const { story, record } of input.stories) {
    for (const gate of record?.inherited ?? []) {
      const entry = byGate.get(gate) ?? { stories: [], lines: new Set<string>() };
      entry.stories.push(story.id);
      const red = record?.inheritedLines?.find((r) => r.command === gate);
      for (const line of red?.lines ?? []) entry.lines.add(line);
      byGate.set(gate, entry);
    }
  }
  if (byGate.size === 0) return [];
  const items = [...byGate].map(([gate, { stories, lines }]) => {
    const all = [...lines];
    const shown = all
      .slice(0, INHERITED_SHOWN)
      .map((l) => `  - ${inlineText(capText(l, NOTE_MAX))}`);
    if (all.length > INHERITED_SHOWN) shown.push(`  - … and ${all.length - INHERITED_SHOWN} more`);
    return [
      `- ${inlineText(capText(gate, NOTE_MAX))}: ${stories.map(code).join(', ')}`,
      ...shown,
    ].join('\n');
  });
  return [
    '## Red on the base (tolerated)',
    'These gates failed on the epic base already, with the failing tests or lines below; the stories named were charged only with failures of their own:',
    items.join('\n'),
  ];
}

/** Findings below critical the judge let stories merge with, under each story (`judge.deferNonBlocking`). */
function deferredSection(input: ReportInput): string[] {
  const items: string[] = [];
  let shown = 0;
  let left = 0;
  for (const { story, record } of input.stories) {
    const findings = record?.deferred ?? [];
    if (findings.length === 0) continue;
    const room = Math.max(0, DEFERRED_SHOWN - shown);
    if (room === 0) {
      left += findings.length;
      continue;
    }
    const listed = findings.slice(0, room);
    shown += listed.length;
    left += findings.length - listed.length;
    items.push(
      `- ${code(story.id)} ${inlineText(capText(story.title, TITLE_MAX))}`,
      ...listed.map((f) => `  - ${inlineText(capText(f, NOTE_MAX))}`),
    );
  }
  if (items.length === 0) return [];
  if (left > 0) items.push(`- … and ${left} more`);
  return [
    '## Deferred',
    'Findings below critical that the judge let these stories merge with:',
    items.join('\n'),
  ];
}

function haltsSection(input: ReportInput): string[] {
  const blocks: string[] = [];
  if (input.halts.length > 0) {
    const items = input.halts.map((halt) => {
      const [first = '', ...rest] = halt.message.split(/\r?\n/).filter((l) => l.trim() !== '');
      const until =
        halt.until === undefined ? '' : ` (until ${formatUtcTime(halt.until, input.now)})`;
      const sub = rest.map((line) => `  - ${inlineText(line)}`);
      return [`- **${HALT_LABELS[halt.kind]}**: ${inlineText(first)}${until}`, ...sub].join('\n');
    });
    blocks.push('## Halted', items.join('\n'));
  }
  if (input.nextStep !== undefined) {
    if (input.halts.length === 0) blocks.push('## Next step');
    // nextStep is epicflow's own markdown (it may hold `/resume` in code): kept, on one line.
    blocks.push(`**Next:** ${input.nextStep.replace(/\s+/g, ' ').trim()}`);
  }
  return blocks;
}

function branchRef(input: ReportInput, branch: string): string {
  const shown = code(branch);
  const url = input.links?.branch?.(branch);
  return url === undefined ? shown : link(shown, url);
}

function commitRef(input: ReportInput, sha: string): string {
  const shown = code(sha.slice(0, 7));
  const url = input.links?.commit?.(sha);
  return url === undefined ? shown : link(shown, url);
}
