/**
 * The local board: `board.md` for people and `board.json` for programs, from the same
 * columns. Every story under its column, in the order a person scans it: what runs now,
 * what comes next, what is stuck, what is done, what failed, what was skipped.
 */
import type { StoryStatus } from '../model.js';
import { formatChain } from '../model.js';
import { capText, code, inlineText } from './escape.js';
import { formatUtcDateTime } from './format.js';
import { statusOf } from './summary.js';
import type { ReportInput, ReportStory } from './types.js';

/**
 * A board column: a story's status, except that a story done without a merge (skipped
 * with `/skip`, or found already in place on the epic branch) is `skipped`: it counts
 * as done for its dependents, but nothing of it was merged.
 */
type BoardColumn = StoryStatus | 'skipped';

const HEADINGS: Readonly<Record<BoardColumn, string>> = {
  active: 'Active',
  planned: 'Planned',
  waiting: 'Waiting',
  done: 'Done',
  failed: 'Failed',
  skipped: 'Skipped',
};

/** The board's fixed section order. */
const BOARD_ORDER: readonly BoardColumn[] = [
  'active',
  'planned',
  'waiting',
  'done',
  'failed',
  'skipped',
];

/** Columns whose reason belongs on the board line. */
const WITH_REASON: ReadonlySet<BoardColumn> = new Set(['waiting', 'failed']);

/** The column a story is shown under. */
function boardColumn(entry: ReportStory): BoardColumn {
  const status = statusOf(entry);
  return status === 'done' && entry.record?.mergeCommit === undefined ? 'skipped' : status;
}

/** Renders the board markdown: sections Active, Planned, Waiting, Done, Failed, Skipped with counts. */
export function renderBoard(input: ReportInput): string {
  const title = input.title === undefined ? '' : ` — ${inlineText(capText(input.title, 200))}`;
  const blocks = [
    `# Board: epic ${inlineText(input.epic)}${title}`,
    `Epic branch: ${code(input.epicBranch)} · ${input.stories.length} stories · updated ${formatUtcDateTime(input.now, 'now')}`,
  ];
  for (const column of BOARD_ORDER) {
    const stories = input.stories.filter((s) => boardColumn(s) === column);
    blocks.push(`## ${HEADINGS[column]} (${stories.length})`);
    blocks.push(stories.length === 0 ? '_none_' : stories.map(boardLine).join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

function boardLine(entry: ReportStory): string {
  const { story, record } = entry;
  let line = `- ${code(story.id)} ${inlineText(capText(story.title, 100))} · wave ${entry.wave}`;
  if (record !== undefined && record.executors.length > 0) {
    line += ` · ${inlineText(formatChain(record.executors))}`;
  }
  const column = boardColumn(entry);
  if (record?.reason !== undefined && WITH_REASON.has(column)) {
    line += ` — ${inlineText(capText(record.reason, 200))}`;
  }
  if (column === 'skipped' && record !== undefined && record.notes.length > 0) {
    line += ` — ${inlineText(capText(record.notes[record.notes.length - 1] ?? '', 200))}`;
  }
  return line;
}

/** One story on `board.json`. */
interface BoardJsonItem {
  readonly id: string;
  readonly title: string;
  readonly wave: number;
  readonly column: BoardColumn;
  readonly dependsOn: readonly string[];
  /** The story branch; null while the story has no record. */
  readonly branch: string | null;
  readonly mergeCommit: string | null;
  /** The executors that held the story's coder, in order. */
  readonly executors: readonly string[];
  /** Why a story waits or failed; null otherwise. */
  readonly reason: string | null;
}

/** `board.json`: the board for programs (version 1). */
interface BoardJson {
  readonly version: 1;
  readonly epic: string;
  readonly title: string | null;
  readonly epicBranch: string;
  /** ISO time the board was written. */
  readonly updatedAt: string;
  readonly counts: Readonly<Record<BoardColumn, number>> & { readonly total: number };
  /** The plan's waves in order: wave 1 first, each a list of story ids. */
  readonly waves: readonly (readonly string[])[];
  /** Every story in plan order. */
  readonly items: readonly BoardJsonItem[];
}

/** The `board.json` document of the same input `renderBoard` shows. */
export function buildBoardJson(input: ReportInput): BoardJson {
  const counts: Record<BoardColumn, number> = {
    active: 0,
    planned: 0,
    waiting: 0,
    done: 0,
    failed: 0,
    skipped: 0,
  };
  const waves: string[][] = [];
  const items = input.stories.map((entry): BoardJsonItem => {
    const column = boardColumn(entry);
    counts[column] += 1;
    if (entry.wave >= 1) (waves[entry.wave - 1] ??= []).push(entry.story.id);
    const r = entry.record;
    return {
      id: entry.story.id,
      title: entry.story.title,
      wave: entry.wave,
      column,
      dependsOn: entry.story.dependsOn,
      branch: r?.branch ?? null,
      mergeCommit: r?.mergeCommit ?? null,
      executors: r?.executors ?? [],
      reason: r?.reason !== undefined && WITH_REASON.has(column) ? r.reason : null,
    };
  });
  return {
    version: 1,
    epic: input.epic,
    title: input.title ?? null,
    epicBranch: input.epicBranch,
    updatedAt: input.now,
    counts: { ...counts, total: input.stories.length },
    waves: Array.from(waves, (w) => w ?? []),
    items,
  };
}
