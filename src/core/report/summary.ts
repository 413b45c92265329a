/**
 * Facts derived from the report input, shared by the markdown, board and JSON
 * renderers so they can never disagree: statuses, counts, usage split into
 * measured and estimated, and the By-executor breakdown.
 */
import type { StoryStatus, UsageEntry } from '../model.js';
import { totalTokens } from '../model.js';
import type { ReportInput, ReportLanding, ReportPlanning, ReportStory } from './types.js';

/** Tokens and cost of a set of usage entries that are all measured or all estimated. */
export interface UsageFigure {
  readonly tokens: number;
  /**
   * US dollars over the entries whose cost is known; null when no entry with
   * tokens has a known cost (the cost is unknown, not zero).
   */
  readonly costUsd: number | null;
  /** Tokens whose cost is unknown; when > 0 and costUsd is a number, the cost is partial. */
  readonly unpricedTokens: number;
}

/** Measured (reported by the CLI) and estimated (characters ÷ 4) usage, never added together. */
export interface UsageSummary {
  readonly measured: UsageFigure;
  readonly estimated: UsageFigure;
}

/** Rounds away float noise (0.1 + 0.2) so sums print and serialise cleanly. */
const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

function figure(entries: readonly UsageEntry[]): UsageFigure {
  let tokens = 0;
  let priced = 0;
  let pricedEntries = 0;
  let unpricedTokens = 0;
  for (const entry of entries) {
    const t = totalTokens(entry.tokens);
    tokens += t;
    if (entry.costUsd === null) unpricedTokens += t;
    else {
      priced += entry.costUsd;
      pricedEntries += 1;
    }
  }
  const costUsd = unpricedTokens > 0 && pricedEntries === 0 ? null : roundUsd(priced);
  return { tokens, costUsd, unpricedTokens };
}

export function summarizeUsage(entries: readonly UsageEntry[]): UsageSummary {
  return {
    measured: figure(entries.filter((e) => e.measured)),
    estimated: figure(entries.filter((e) => !e.measured)),
  };
}

export function isEmptyUsage(usage: UsageSummary): boolean {
  return usage.measured.tokens === 0 && usage.estimated.tokens === 0;
}

export function statusOf(entry: ReportStory): StoryStatus {
  return entry.record?.status ?? 'planned';
}

export type StatusCounts = Readonly<Record<StoryStatus, number>> & { readonly total: number };

export function countStatuses(stories: readonly ReportStory[]): StatusCounts {
  const counts: Record<StoryStatus, number> = {
    done: 0,
    failed: 0,
    waiting: 0,
    active: 0,
    planned: 0,
  };
  for (const s of stories) counts[statusOf(s)] += 1;
  return { ...counts, total: stories.length };
}

/** A story an executor finished: done, with that executor last in its chain. */
export interface FinishedStory {
  readonly id: string;
  /** The whole chain, e.g. ['codex', 'claude'] for a handover. */
  readonly chain: readonly string[];
}

export interface ExecutorSummary {
  readonly executor: string;
  readonly finished: readonly FinishedStory[];
  /** What this executor spent, over every story (finished or not) and the planning. */
  readonly usage: UsageSummary;
  /** Set when this executor planned the epic. */
  readonly planned?: true;
}

function pushTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * One row per executor seen in any chain or usage entry (the planning's
 * included), sorted by name. A done story counts for the LAST executor of its
 * chain (the one that finished it).
 */
export function summarizeExecutors(
  stories: readonly ReportStory[],
  planning?: ReportPlanning,
  landings: readonly ReportLanding[] = [],
): ExecutorSummary[] {
  const finished = new Map<string, FinishedStory[]>();
  const usage = new Map<string, UsageEntry[]>();
  const seen = new Set<string>();
  const planners = new Set(planning?.executors ?? []);
  for (const executor of planners) seen.add(executor);
  for (const entry of planning?.usage ?? []) {
    seen.add(entry.executor);
    planners.add(entry.executor);
    pushTo(usage, entry.executor, entry);
  }
  for (const landing of landings) {
    for (const executor of landing.executors) seen.add(executor);
    for (const entry of landing.usage) {
      seen.add(entry.executor);
      pushTo(usage, entry.executor, entry);
    }
  }
  for (const { story, record } of stories) {
    if (!record) continue;
    for (const executor of record.executors) seen.add(executor);
    for (const entry of record.usage) {
      seen.add(entry.executor);
      pushTo(usage, entry.executor, entry);
    }
    const last = record.executors[record.executors.length - 1];
    if (record.status === 'done' && last !== undefined) {
      pushTo(finished, last, { id: story.id, chain: record.executors });
    }
  }
  return [...seen].sort().map((executor) => ({
    executor,
    finished: finished.get(executor) ?? [],
    usage: summarizeUsage(usage.get(executor) ?? []),
    ...(planners.has(executor) ? { planned: true as const } : {}),
  }));
}

/** Every usage entry of the epic: the planning's, each story's, then each landing's. */
export function allUsage(input: ReportInput): UsageEntry[] {
  return [
    ...(input.planning?.usage ?? []),
    ...input.stories.flatMap((s) => s.record?.usage ?? []),
    ...(input.landings ?? []).flatMap((l) => l.usage),
  ];
}
