/**
 * The rules of one story's record that every loop applies — the local run, the
 * GitHub reconcile, `epicflow status`, the full report, the story job and the
 * Action's summary — each in one place:
 *
 * - a story's first record (`blankRecord`), and one without its reason;
 * - merged on the epic branch wins over any record (`mergedRecord`, `effectiveStatus`), and a
 *   done record keeps nothing of the attempt's way there (`DONE_DROPS`);
 * - which attempt a start runs (`attemptOf`) and which executor it prefers
 *   (`preferredExecutor`);
 * - a hold makes a story waiting with the scheduler's reason, a release makes it
 *   planned again (`heldRecord`, `releasedRecord`);
 * - a story stopped because its job was cancelled fails, for `/resume` (`cancelledRecord`);
 * - the budget halt, carried as data (`budgetHalt`: kind, unit, limit, spent), and
 *   the usage totals it is measured by (`usageTotals`).
 */
import type { EpicflowConfig } from '../config/types.js';
import {
  storyBranchName,
  totalTokens,
  type BudgetHalt,
  type Story,
  type StoryRecord,
  type StoryStatus,
} from '../model.js';
import { formatUsd } from '../report/format.js';
import { CANCELLED } from '../story/texts.js';

/** The record of a story that has none yet: planned, attempt 1, nothing spent. */
export function blankRecord(epic: string, story: string, planHash: string): StoryRecord {
  return {
    version: 1,
    epic,
    story,
    planHash,
    status: 'planned',
    branch: storyBranchName(epic, story),
    attempt: 1,
    executors: [],
    usage: [],
    notes: [],
    timings: {},
  };
}

export function withoutReason(record: StoryRecord): StoryRecord {
  const { reason: _r, ...rest } = record;
  return rest;
}

/**
 * What a record drops when its story is done, however it came to be: why it stopped, the
 * attempt's way there (`progress`, the ticks of its `tasks`) and a size it outgrew. A later
 * run of the story (a review round, a follow-up) starts from its merge, not from them.
 */
export const DONE_DROPS = ['reason', 'outgrown', 'progress', 'tasks'] as const;

/**
 * Merged on the epic branch wins: the record as it must be once the branch holds the
 * story's merge commit. The same record when it already says so (nothing to write).
 */
export function mergedRecord(
  record: StoryRecord,
  mergeCommit: string,
  now: string | undefined,
): StoryRecord {
  if (record.status === 'done' && record.mergeCommit === mergeCommit) return record;
  const kept: Record<string, unknown> = { ...record };
  for (const key of DONE_DROPS) delete kept[key];
  return {
    ...(kept as unknown as StoryRecord),
    status: 'done',
    mergeCommit,
    ...(record.finishedAt === undefined && now !== undefined ? { finishedAt: now } : {}),
  };
}

/**
 * Where a story stands: the epic branch first (merged is done), then a failure derived
 * from outside facts, then the record; no record is planned.
 */
export function effectiveStatus(facts: {
  readonly mergeCommit: string | undefined;
  readonly derivedFailure?: string | undefined;
  readonly record: StoryRecord | undefined;
}): StoryStatus {
  if (facts.mergeCommit !== undefined) return 'done';
  if (facts.derivedFailure !== undefined) return 'failed';
  return facts.record?.status ?? 'planned';
}

/**
 * The attempt a start of the story runs. Resuming the same start — a crash mid-story, or
 * the job of a dispatch, whose record is `active` at that attempt (with this plan entry,
 * or marked to restart: the dispatch raised the attempt) — runs that attempt; so does a
 * story that never started. Any other start (a retry, a resume of a failed story, a
 * changed entry) is a new attempt.
 */
export function attemptOf(prior: StoryRecord | null | undefined, planHash: string): number {
  if (prior === null || prior === undefined) return 1;
  if (prior.status === 'active' && (prior.planHash === planHash || prior.restart === 'fresh')) {
    return prior.attempt;
  }
  if (prior.startedAt === undefined) return prior.attempt;
  return prior.attempt + 1;
}

/**
 * The executor a start prefers: the one the story last had, unless its plan entry
 * changed (or it is marked to restart: the work starts over), else the plan's choice.
 */
export function preferredExecutor(
  story: Story,
  prior: StoryRecord | null | undefined,
  planHash: string,
): string | undefined {
  const continues =
    prior !== null &&
    prior !== undefined &&
    prior.planHash === planHash &&
    prior.restart !== 'fresh';
  const last = continues ? prior.executors[prior.executors.length - 1] : undefined;
  return last ?? story.executor;
}

/** A hold of the scheduler: waiting, with its reason; the record as it is when already so. */
export function heldRecord(record: StoryRecord, reason: string): StoryRecord {
  if (record.status === 'waiting' && record.reason === reason) return record;
  return { ...record, status: 'waiting', reason };
}

/**
 * A story whose job was cancelled while it ran (the engine stopped it, waiting to be run
 * again): failed, so nothing dispatches it again by itself — a person cancelled it — and
 * `/resume` continues it from its progress. Any other record is as it is.
 */
export function cancelledRecord(record: StoryRecord): StoryRecord {
  if (record.status !== 'waiting') return record;
  return { ...record, status: 'failed', reason: CANCELLED };
}

/** A release: a waiting story is planned again, without the reason it waited for. */
export function releasedRecord(record: StoryRecord): StoryRecord {
  if (record.status !== 'waiting') return record;
  return withoutReason({ ...record, status: 'planned' });
}

/**
 * What the records spent: dollars (usage without a known price counts $0) and tokens,
 * and whether any figure was estimated or priced at all.
 */
export function usageTotals(records: Iterable<StoryRecord>): {
  usd: number;
  tokens: number;
  estimated: boolean;
  priced: boolean;
} {
  let usd = 0;
  let tokens = 0;
  let estimated = false;
  let priced = false;
  for (const r of records) {
    for (const u of r.usage) {
      usd += u.costUsd ?? 0;
      tokens += totalTokens(u.tokens);
      if (u.costUsd !== undefined && u.costUsd !== null) priced = true;
      if (!u.measured) estimated = true;
    }
  }
  return { usd, tokens, estimated, priced };
}

/**
 * The budget halt: measured and estimated usage alike, cumulative over every run of the
 * epic. Carried as data (which limit, its value, what was spent); the message is only
 * for people.
 */
export function budgetHalt(
  config: EpicflowConfig,
  records: Iterable<StoryRecord>,
): BudgetHalt | undefined {
  const budget = config.budget;
  if (budget === undefined) return undefined;
  const { usd, tokens } = usageTotals(records);
  if (budget.usd !== undefined && usd >= budget.usd) {
    return {
      kind: 'budget',
      message: `budget of ${formatUsd(budget.usd)} spent (${formatUsd(usd)})`,
      budget: { unit: 'usd', limit: budget.usd, spent: usd },
    };
  }
  if (budget.tokens !== undefined && tokens >= budget.tokens) {
    return {
      kind: 'budget',
      message: `budget of ${budget.tokens} tokens spent (${tokens})`,
      budget: { unit: 'tokens', limit: budget.tokens, spent: tokens },
    };
  }
  return undefined;
}
