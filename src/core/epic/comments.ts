/**
 * The two sticky comments (docs/commands.md): a short status on the epic issue and
 * the full report on the epic pull request. Each carries its marker and stays
 * under GitHub's 65,536-character limit.
 */
import type { Halt, StoryRecord } from '../model.js';
import { epicBranchName } from '../model.js';
import type { ReportInput, ReportLinks, ReportPlanning, ReportStory } from '../report/index.js';
import { countStatuses, GITHUB_BODY_MAX, renderReport } from '../report/index.js';
import { ELAPSED } from '../report/markdown.js';
import { buildMermaid, mermaidFits } from '../report/mermaid.js';
import { capText, code } from '../report/escape.js';
import { formatUtcDateTime } from '../report/format.js';
import { helpText } from './commands.js';
import { markerOverhead, REPORT_MARKER, STATUS_MARKER, withMarker } from './markers.js';
import { neutralizeMentions, sanitizeIssueText } from './sanitize.js';
import { echoInline } from './texts.js';
import { checksText, rollUpChecks, type PullChecks } from './pr-checks.js';

/** Before the status comment's time of its last change. */
const UPDATED = ' · updated';

/** The clock's text in a sticky comment: the status's time (line end), the report's elapsed time. */
const CLOCK_TEXT = [
  new RegExp(`${UPDATED} \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC$`, 'm'),
  new RegExp(`^${ELAPSED} .*$`, 'm'),
];

/**
 * Whether two bodies of a sticky comment (or two texts of the full report) differ in
 * nothing but the clock's text (the status comment's `updated` time, the report's elapsed
 * time). Such a body is not written again: it keeps showing the time of its last real
 * change, and a second decision on the same facts (the App's after a story job's) writes
 * nothing.
 */
export function sameButForTime(a: string, b: string): boolean {
  if (a === b) return true;
  const clockless = (body: string): string =>
    CLOCK_TEXT.reduce((text, re) => text.replace(re, '…'), body);
  return clockless(a) === clockless(b);
}

/** Stories listed by name under "Needs attention" before the rest are counted. */
const ATTENTION_MAX = 25;
const REASON_MAX = 200;

interface StatusCommentInput {
  readonly epic: { readonly number: number; readonly title: string };
  /** In plan order, with the records as they stand after this decision. */
  readonly stories: readonly ReportStory[];
  /** The scheduler's one-line summary. */
  readonly summary: string;
  readonly halt?: Halt | undefined;
  readonly pr?:
    | { readonly number: number; readonly draft: boolean; readonly checks?: PullChecks | undefined }
    | undefined;
  /** Markdown written by epicflow: what of the plan is not approved yet, while it is held for approval. */
  readonly notApproved?: string | undefined;
  /** Markdown written by epicflow: what the reader should do next. */
  readonly nextStep: string;
  readonly now: string;
}

/** ` · checks: …` after the pull request, when its head commit has checks (names are CI's text). */
function prChecks(checks: PullChecks | undefined): string {
  const text = checks === undefined ? null : checksText(rollUpChecks(checks));
  return text === null ? '' : ` · ${echoInline(text, 300)}`;
}

/** The status comment on the epic issue: state, counts, graph, what needs attention, next step, commands. */
export function renderStatusComment(input: StatusCommentInput): string {
  const counts = countStatuses(input.stories);
  const branch = code(epicBranchName(String(input.epic.number)));
  const pr =
    input.pr === undefined
      ? ''
      : ` · pull request #${input.pr.number}${input.pr.draft ? ' (draft)' : ''}${prChecks(input.pr.checks)}`;
  const head = [
    `## epicflow · epic #${input.epic.number}: ${echoInline(input.epic.title, 200)}`,
    [
      `**${echoInline(input.summary, 500)}**`,
      `Epic branch ${branch}${pr}${UPDATED} ${formatUtcDateTime(input.now, 'now')}`,
    ].join('  \n'),
    [
      '| Done | Active | Waiting | Failed | Planned | Total |',
      '| --- | --- | --- | --- | --- | --- |',
      `| ${counts.done} | ${counts.active} | ${counts.waiting} | ${counts.failed} | ${counts.planned} | ${counts.total} |`,
    ].join('\n'),
  ];
  const graph = buildMermaid(input.stories);
  const attention = attentionList(input.stories);
  const tail = [
    ...(input.halt === undefined ? [] : [`**Halted:** ${echoInline(input.halt.message, 500)}`]),
    ...(input.notApproved === undefined ? [] : [`**Not approved yet:** ${input.notApproved}`]),
    `**Next:** ${input.nextStep.replace(/\s+/g, ' ').trim()}`,
    `<details><summary>Commands</summary>\n\n${helpText()}\n\n</details>`,
  ];
  const compose = (withGraph: boolean): string => {
    const blocks = [...head];
    if (input.stories.length > 0) {
      blocks.push(
        withGraph
          ? graph.text
          : '_Graph not shown: too large for a comment; see the report on the pull request._',
      );
    }
    if (attention.length > 0) blocks.push('### Needs attention', attention.join('\n'));
    blocks.push(...tail);
    return withMarker(blocks.join('\n\n'), STATUS_MARKER);
  };
  // The attention list is capped, so only the graph can push the body over the limit.
  const full = compose(mermaidFits(graph));
  return full.length <= GITHUB_BODY_MAX ? full : compose(false);
}

/**
 * What a person may act on: failed stories, then waiting ones, each with its
 * reason, then started stories whose plan entry changed (they need `/resume`).
 */
function attentionList(stories: readonly ReportStory[]): string[] {
  const changed = (s: ReportStory): boolean => s.record?.notes.includes(PLAN_CHANGED_NOTE) ?? false;
  const picked = [
    ...stories.filter((s) => s.record?.status === 'failed'),
    ...stories.filter((s) => s.record?.status === 'waiting'),
    ...stories.filter((s) => changed(s) && !ATTENTION_STATUSES.has(s.record?.status ?? 'planned')),
  ];
  const lines = picked.slice(0, ATTENTION_MAX).map((s) => {
    const status = s.record?.status ?? 'planned';
    const why = [s.record?.reason, ...(changed(s) ? [PLAN_CHANGED_NOTE] : [])]
      .filter((r): r is string => r !== undefined && r !== '')
      .join('; ');
    return `- ${code(s.story.id)} ${status}${why === '' ? '' : ` — ${echoInline(why, REASON_MAX)}`}`;
  });
  const hidden = picked.length - lines.length;
  if (hidden > 0) lines.push(`- … and ${hidden} more in the report on the pull request`);
  return lines;
}

const ATTENTION_STATUSES: ReadonlySet<string> = new Set(['failed', 'waiting']);

/** Shown on a started story whose plan entry changed, until `/resume` restarts it. */
export const PLAN_CHANGED_NOTE = 'plan entry changed: restarts from the epic head on `/resume`';

interface ReportCommentInput {
  readonly epic: { readonly number: number; readonly title: string };
  readonly stories: readonly ReportStory[];
  readonly halts: readonly Halt[];
  readonly now: string;
  readonly startedAt?: string | undefined;
  readonly nextStep?: string | undefined;
  readonly links?: ReportLinks | undefined;
  readonly fullReportUrl?: string | undefined;
  /** What planning the epic cost, when the planner drafted its plan (the Planning row). */
  readonly planning?: ReportPlanning | undefined;
  /** The epic's landings, as rows below the stories. */
  readonly landings?: ReportInput['landings'];
}

/** The report comment on the epic pull request: the full report, marked, within the limit. */
export function renderReportComment(input: ReportCommentInput): string {
  const report: ReportInput = {
    epic: `#${input.epic.number}`,
    title: fitInert(input.epic.title, REPORT_LIMITS.title),
    epicBranch: epicBranchName(String(input.epic.number)),
    startedAt: input.startedAt,
    now: input.now,
    stories: input.stories.map(inertStory),
    halts: input.halts.map((h) => ({
      ...h,
      message: neutralizeMentions(sanitizeIssueText(h.message)),
    })),
    nextStep: input.nextStep,
    fullReportUrl: input.fullReportUrl,
    links: input.links,
    ...(input.planning === undefined ? {} : { planning: input.planning }),
    ...(input.landings === undefined ? {} : { landings: input.landings }),
  };
  const body = renderReport(report, {
    maxChars: GITHUB_BODY_MAX - markerOverhead(REPORT_MARKER),
  });
  return withMarker(body, REPORT_MARKER);
}

/**
 * Lengths at which `renderReport` cuts a title, and the joined reason and
 * notes of a row. Text handed to it is made inert and kept within them, so
 * its cut can never split one of our code spans and revive a mention.
 */
const REPORT_LIMITS = { title: 200, rowTitle: 80, note: 300 } as const;

function inertStory(entry: ReportStory): ReportStory {
  const story = { ...entry.story, title: fitInert(entry.story.title, REPORT_LIMITS.rowTitle) };
  if (entry.record === undefined) return { ...entry, story };
  const { reason, notes, deferred, ...rest } = entry.record;
  const note = [...(reason === undefined ? [] : [reason]), ...notes].join('; ');
  const record: StoryRecord = {
    ...rest,
    ...(deferred === undefined
      ? {}
      : { deferred: deferred.map((f) => fitInert(f, REPORT_LIMITS.note)) }),
    notes: [],
    ...(note === '' ? {} : { reason: fitInert(note, REPORT_LIMITS.note) }),
  };
  return { ...entry, story, record };
}

/** People's text, mentions inert, at most `max` characters (code points) once escaped. */
export function fitInert(text: string, max: number): string {
  const clean = sanitizeIssueText(text).replace(/\s+/g, ' ').trim();
  let n = max;
  while (n > 0) {
    const out = neutralizeMentions(capText(clean, n));
    const length = Array.from(out).length;
    if (length <= max) return out;
    n -= length - max;
  }
  return '';
}
