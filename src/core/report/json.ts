/**
 * `report.json` (a fixed contract, README.md): at least
 * `{epic, epicBranch, stories: [{id, status, branch, executor, reason, usage}]}`
 * where status is `done`, `failed` or `waiting`. Stories not finished when the
 * report was written (planned, active) are `waiting` with a reason saying why;
 * `boardStatus` keeps the finer status.
 */
import type { Halt, InheritedGate, StoryStatus, UsageEntry } from '../model.js';
import { formatChain } from '../model.js';
import type { ExecutorSummary, StatusCounts, UsageSummary } from './summary.js';
import { allUsage, countStatuses, summarizeExecutors, summarizeUsage } from './summary.js';
import type { ReportInput, ReportStory } from './types.js';

type ReportStoryStatus = 'done' | 'failed' | 'waiting';

export interface ReportJsonUsage extends UsageSummary {
  readonly entries: readonly UsageEntry[];
}

export interface ReportJsonStory {
  readonly id: string;
  readonly title: string;
  readonly status: ReportStoryStatus;
  /** The board status before mapping: planned and active become `waiting` in `status`. */
  readonly boardStatus: StoryStatus;
  readonly wave: number;
  readonly dependsOn: readonly string[];
  /** The story branch; null while the story has no record. */
  readonly branch: string | null;
  readonly mergeCommit: string | null;
  /** The executor chain, e.g. `codex → claude`; null when no executor held the story. */
  readonly executor: string | null;
  readonly reason: string | null;
  readonly notes: readonly string[];
  /** Gates red on the base already that this story was not charged for. */
  readonly inherited: readonly string[];
  /** For each such gate: the failing tests or lines that were red on the base. */
  readonly inheritedLines: readonly InheritedGate[];
  /** The judge's findings below critical the story merged with (`judge.deferNonBlocking`). */
  readonly deferred: readonly string[];
  readonly attempt: number | null;
  readonly usage: ReportJsonUsage;
}

export interface ReportJson {
  readonly version: 1;
  readonly epic: string;
  readonly title: string | null;
  readonly epicBranch: string;
  /** The input's `now`. */
  readonly generatedAt: string;
  readonly startedAt: string | null;
  readonly counts: StatusCounts;
  /** Measured and estimated kept apart, never summed. */
  readonly totals: UsageSummary;
  readonly byExecutor: readonly ExecutorSummary[];
  readonly stories: readonly ReportJsonStory[];
  readonly halts: readonly Halt[];
  readonly nextStep: string | null;
  /** Only when the epic was landed (`epicflow land`): each landing and what it cost. */
  readonly landings?: readonly {
    readonly job: string;
    readonly into: string;
    readonly outcome: string;
    readonly rounds: number;
    readonly executors: readonly string[];
    readonly conflicts: readonly string[];
    readonly reason: string | null;
    readonly usage: ReportJsonUsage;
  }[];
  /** Only when the plan was drafted by a planner: what planning cost. */
  readonly planning?: {
    readonly executors: readonly string[];
    readonly rounds: number | null;
    readonly usage: ReportJsonUsage;
  };
}

/** Reasons for stories that had not finished when the report was written. */
const NOT_STARTED_REASON = 'not started';
const INTERRUPTED_REASON = 'interrupted';

/** Builds the report.json document (plain data, ready for `JSON.stringify`). */
export function buildReportJson(input: ReportInput): ReportJson {
  return {
    version: 1,
    epic: input.epic,
    title: input.title ?? null,
    epicBranch: input.epicBranch,
    generatedAt: input.now,
    startedAt: input.startedAt ?? null,
    counts: countStatuses(input.stories),
    totals: summarizeUsage(allUsage(input)),
    byExecutor: summarizeExecutors(input.stories, input.planning, input.landings),
    stories: input.stories.map(storyJson),
    // What people read about a halt; its facts (a budget's numbers) stay internal.
    halts: input.halts.map((h) => ({
      kind: h.kind,
      message: h.message,
      ...(h.until === undefined ? {} : { until: h.until }),
    })),
    nextStep: input.nextStep ?? null,
    ...(input.landings === undefined || input.landings.length === 0
      ? {}
      : {
          landings: input.landings.map((l) => ({
            job: l.job,
            into: l.into,
            outcome: l.outcome,
            rounds: l.rounds,
            executors: [...l.executors],
            conflicts: [...l.conflicts],
            reason: l.reason ?? null,
            usage: { ...summarizeUsage(l.usage), entries: l.usage },
          })),
        }),
    ...(input.planning === undefined
      ? {}
      : {
          planning: {
            executors: [...input.planning.executors],
            rounds: input.planning.rounds ?? null,
            usage: { ...summarizeUsage(input.planning.usage), entries: input.planning.usage },
          },
        }),
  };
}

function storyJson({ story, wave, record }: ReportStory): ReportJsonStory {
  const boardStatus = record?.status ?? 'planned';
  const usage = record?.usage ?? [];
  return {
    id: story.id,
    title: story.title,
    ...statusAndReason(boardStatus, record?.reason),
    boardStatus,
    wave,
    dependsOn: story.dependsOn,
    branch: record?.branch ?? null,
    mergeCommit: record?.mergeCommit ?? null,
    executor: record && record.executors.length > 0 ? formatChain(record.executors) : null,
    notes: record?.notes ?? [],
    inherited: record?.inherited ?? [],
    inheritedLines: record?.inheritedLines ?? [],
    deferred: record?.deferred ?? [],
    attempt: record?.attempt ?? null,
    usage: { ...summarizeUsage(usage), entries: usage },
  };
}

function statusAndReason(
  status: StoryStatus,
  reason: string | undefined,
): { status: ReportStoryStatus; reason: string | null } {
  switch (status) {
    case 'done':
    case 'failed':
    case 'waiting':
      return { status, reason: reason ?? null };
    case 'planned':
      return { status: 'waiting', reason: reason ?? NOT_STARTED_REASON };
    case 'active':
      // A report written while a story is still active means the run stopped under it.
      return {
        status: 'waiting',
        reason: reason === undefined ? INTERRUPTED_REASON : `${INTERRUPTED_REASON}: ${reason}`,
      };
  }
}
