import type { Halt, Story, StoryRecord, UsageEntry } from '../model.js';

/** One story as the report sees it: the plan entry, its wave, and its record once it has one. */
export interface ReportStory {
  readonly story: Story;
  readonly wave: number;
  /** Absent while the story is only planned. */
  readonly record?: StoryRecord | undefined;
}

/**
 * What planning the epic cost: the planner's turns that turned the prose into
 * the plan (every round, repairs included). Shown as its own row.
 */
export interface ReportPlanning {
  readonly usage: readonly UsageEntry[];
  /** The planner executors that answered, in order. */
  readonly executors: readonly string[];
  /** Planner rounds (1 = accepted at once). */
  readonly rounds?: number | undefined;
}

/** One landing of the epic (`epicflow land`): a branch brought in, then the epic merged into it. */
export interface ReportLanding {
  /** `land-1`, `land-2`, … */
  readonly job: string;
  readonly into: string;
  readonly outcome: 'running' | 'landed' | 'not-landed';
  readonly rounds: number;
  readonly executors: readonly string[];
  readonly usage: readonly UsageEntry[];
  readonly conflicts: readonly string[];
  readonly reason?: string | undefined;
}

/**
 * Optional URL builders (GitHub). Without them, branches and commits are shown
 * as plain code, which is what a local `report.md` wants.
 */
export interface ReportLinks {
  readonly branch?: ((branch: string) => string) | undefined;
  readonly commit?: ((sha: string) => string) | undefined;
}

/** Everything the renderers need; they read nothing else (no clock, no files). */
export interface ReportInput {
  readonly epic: string;
  readonly title?: string | undefined;
  readonly epicBranch: string;
  /** ISO time the epic started; elapsed time is `now - startedAt`. */
  readonly startedAt?: string | undefined;
  /** ISO time of rendering. */
  readonly now: string;
  /** In plan order. */
  readonly stories: readonly ReportStory[];
  readonly halts: readonly Halt[];
  /** Markdown written by epicflow itself, e.g. "comment `/resume` after 14:00 UTC". */
  readonly nextStep?: string | undefined;
  /** Linked from the truncation note when a body had to be shortened. */
  readonly fullReportUrl?: string | undefined;
  readonly links?: ReportLinks | undefined;
  /** The planning's usage, when the plan was drafted by a planner. */
  readonly planning?: ReportPlanning | undefined;
  /** The landings so far, oldest first. */
  readonly landings?: readonly ReportLanding[] | undefined;
}

export interface ReportOptions {
  /** Upper bound on the rendered length (default 65,536: GitHub's comment limit). */
  readonly maxChars?: number | undefined;
}
