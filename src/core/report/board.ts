/**
 * The local board (`board.md`): every story under its status, in the order a
 * person scans it: what runs now, what comes next, what is stuck, what is done.
 */
import type { StoryStatus } from '../model.js';
import { formatChain } from '../model.js';
import { capText, code, inlineText } from './escape.js';
import { formatUtcDateTime } from './format.js';
import { statusOf } from './summary.js';
import type { ReportInput, ReportStory } from './types.js';

const HEADINGS: Readonly<Record<StoryStatus, string>> = {
  active: 'Active',
  planned: 'Planned',
  waiting: 'Waiting',
  done: 'Done',
  failed: 'Failed',
};

/** The board's fixed section order (the Status options, docs/setup-app.md). */
const BOARD_ORDER: readonly StoryStatus[] = ['active', 'planned', 'waiting', 'done', 'failed'];

/** Statuses whose reason belongs on the board line. */
const WITH_REASON: ReadonlySet<StoryStatus> = new Set(['waiting', 'failed']);

/** Renders the board markdown: sections Active, Planned, Waiting, Done, Failed with counts. */
export function renderBoard(input: ReportInput): string {
  const title = input.title === undefined ? '' : ` — ${inlineText(capText(input.title, 200))}`;
  const blocks = [
    `# Board: epic ${inlineText(input.epic)}${title}`,
    `Epic branch: ${code(input.epicBranch)} · ${input.stories.length} stories · updated ${formatUtcDateTime(input.now, 'now')}`,
  ];
  for (const status of BOARD_ORDER) {
    const stories = input.stories.filter((s) => statusOf(s) === status);
    blocks.push(`## ${HEADINGS[status]} (${stories.length})`);
    blocks.push(stories.length === 0 ? '_none_' : stories.map(boardLine).join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

function boardLine(entry: ReportStory): string {
  const { story, record } = entry;
  let line = `- ${code(story.id)} ${inlineText(capText(story.title, 100))}`;
  if (record !== undefined && record.executors.length > 0) {
    line += ` · ${inlineText(formatChain(record.executors))}`;
  }
  if (record?.reason !== undefined && WITH_REASON.has(record.status)) {
    line += ` — ${inlineText(capText(record.reason, 200))}`;
  }
  return line;
}
