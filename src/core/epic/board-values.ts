/**
 * The Projects (v2) fields of one story: Status, Wave, Executor, Tokens, Cost
 * (docs/setup-app.md). The one description of a story's row and of the Status
 * options; the adapter (adapters/github/board.ts) reads the board's current
 * values and writes only the cells that differ.
 */
import type { StoryRecord, StoryStatus } from '../model.js';
import { formatChain, totalTokens } from '../model.js';

export type BoardStatus = 'Planned' | 'Active' | 'Waiting' | 'Done' | 'Failed';

export const BOARD_STATUSES: readonly BoardStatus[] = [
  'Planned',
  'Active',
  'Waiting',
  'Done',
  'Failed',
];

export interface BoardValues {
  readonly Status: BoardStatus;
  readonly Wave: number;
  /** The executor chain, `codex → claude`; empty before any executor held the story. */
  readonly Executor: string;
  /** Measured plus estimated tokens (the report keeps them apart; a board cell cannot). */
  readonly Tokens: number;
  /** US dollars over the usage whose cost is known; null when none is known (the cell is cleared). */
  readonly Cost: number | null;
}

const STATUS_NAMES: Readonly<Record<StoryStatus, BoardStatus>> = {
  planned: 'Planned',
  active: 'Active',
  waiting: 'Waiting',
  done: 'Done',
  failed: 'Failed',
};

/** The board option of a story status. */
export function boardStatusOf(status: StoryStatus): BoardStatus {
  return STATUS_NAMES[status];
}

const STATUS_OF_OPTION = Object.fromEntries(
  Object.entries(STATUS_NAMES).map(([status, option]) => [option, status]),
) as Readonly<Record<BoardStatus, StoryStatus>>;

/** The story status a board option shows. */
export function storyStatusOf(option: BoardStatus): StoryStatus {
  return STATUS_OF_OPTION[option];
}

interface BoardStoryInput {
  readonly wave: number;
  readonly record?: StoryRecord | undefined;
  /** Merged-ness comes from the epic branch and wins over the record. */
  readonly merged?: boolean;
}

export function boardValues({ wave, record, merged = false }: BoardStoryInput): BoardValues {
  const usage = record?.usage ?? [];
  const priced = usage.filter((u) => u.costUsd !== null);
  const cost = priced.reduce((sum, u) => sum + (u.costUsd ?? 0), 0);
  return {
    Status: merged ? 'Done' : STATUS_NAMES[record?.status ?? 'planned'],
    Wave: wave,
    Executor: formatChain(record?.executors ?? []),
    Tokens: usage.reduce((sum, u) => sum + totalTokens(u.tokens), 0),
    // Rounded to cents' hundredths so float noise never counts as a change.
    Cost: priced.length === 0 ? null : Math.round(cost * 10_000) / 10_000,
  };
}
