/**
 * The shared vocabulary of epicflow's pure core: stories, their durable records,
 * usage, and the statuses every part (engine, App, Action, reports) speaks in.
 * Nothing here does I/O.
 */

import type { JudgeVerdict } from './judge/verdict.js';

/** One story of a plan, after parsing and path normalisation (docs/plan-format.md). */
export interface Story {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly owns: readonly string[];
  readonly reads: readonly string[];
  /** Files or folders the coder reads first (`readFirst`); absent when none. Pruned when run. */
  readonly readFirst?: readonly string[];
  readonly dependsOn: readonly string[];
  readonly provides: readonly string[];
  readonly acceptance: readonly string[];
  readonly executor?: string;
  readonly testsChange: boolean;
  /** Run as a task plan (`tasks` in the plan); absent: as the config says. */
  readonly tasks?: boolean;
}

/** A valid plan: stories in plan order, plus derived facts. */
export interface Plan {
  readonly stories: readonly Story[];
  /** Waves in order; wave 1 first. Each wave lists story ids in plan order. */
  readonly waves: readonly (readonly string[])[];
  /** Story id → stable hash of its normalised entry. */
  readonly hashes: Readonly<Record<string, string>>;
}

/**
 * Where a story stands. `waiting` always carries a reason in the record:
 * `waiting for <id>` (a dependency failed) or `not started: <reason>` (a halt).
 */
export type StoryStatus = 'planned' | 'active' | 'waiting' | 'done' | 'failed';

export const STORY_STATUSES: readonly StoryStatus[] = [
  'active',
  'planned',
  'waiting',
  'done',
  'failed',
];

/** Token counts of one or more model calls. */
export interface TokenCounts {
  readonly input: number;
  readonly cachedInput: number;
  readonly cacheWrite: number;
  readonly output: number;
}

/**
 * Usage of one executor on one model within a story. `measured` is false when
 * the tokens were estimated (characters ÷ 4): every report labels estimates.
 */
export interface UsageEntry {
  readonly executor: string;
  readonly model: string;
  readonly tokens: TokenCounts;
  readonly measured: boolean;
  /** Cost in US dollars; null when neither the CLI nor the price table knows. */
  readonly costUsd: number | null;
  readonly costSource: 'cli' | 'price-table' | 'none';
}

/**
 * How far a story's current attempt got on its branch: its last commit and the checks it
 * passed there, so that a resume after an interruption (a crash, SIGINT, a job that died)
 * carries on from that commit instead of paying for a coder turn again. `checks`: gates
 * and perimeter passed; `judge`: the judge cleared it too. Dropped once the story ends.
 */
export interface StoryProgress {
  readonly commit: string;
  readonly passed: 'none' | 'checks' | 'judge';
}

/** The durable record of one story (one file per story; versioned JSON). */
/** A gate red on a story's base, with the failing tests or lines it showed there. */
export interface InheritedGate {
  readonly command: string;
  readonly lines: readonly string[];
}

/**
 * How a failed story proved too big for one coder: its turn ran out of time
 * (`timed-out`), or its gates were still red when its fix rounds were spent (`still-red`).
 */
export type Outgrown = 'timed-out' | 'still-red';

export const OUTGROWN: readonly Outgrown[] = ['timed-out', 'still-red'];

export interface StoryRecord {
  readonly version: 1;
  readonly epic: string;
  readonly story: string;
  readonly planHash: string;
  readonly status: StoryStatus;
  readonly branch: string;
  /** 1 for the first run, incremented by each restart or retry. */
  readonly attempt: number;
  /** Executors that held the coder role, in order: ['codex', 'claude'] = codex → claude. */
  readonly executors: readonly string[];
  readonly usage: readonly UsageEntry[];
  /** Failure or waiting reason, e.g. "no changes", "waiting for api". */
  readonly reason?: string;
  /** A failed story that proved too big (timed out, or still red after its fix rounds). */
  readonly outgrown?: Outgrown;
  /** Further notes for the report: restored paths, judge note. */
  readonly notes: readonly string[];
  readonly mergeCommit?: string;
  /** The story commit every check judged and that was merged (the merge's second parent). */
  readonly storyCommit?: string;
  /** Where an interrupted attempt stands (see `StoryProgress`); absent once it ended. */
  readonly progress?: StoryProgress;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** Milliseconds per lifecycle phase (setup, code, gates, perimeter, judge, integrate). */
  readonly timings: Readonly<Record<string, number>>;
  /** The next run starts from the epic head: its plan entry changed after the story had started. */
  readonly restart?: 'fresh';
  /** The review round the story runs (or ran) again for, with its comments (docs/commands.md). */
  readonly revision?: Revision;
  /** The judge's last verdict, kept for a rerun over the same fingerprint (`HelperAnswer`). */
  readonly judged?: HelperAnswer<JudgeVerdict>;
  /** Each review lens's last answer, by the lens's name, kept the same way. */
  readonly reviewed?: Readonly<
    Record<
      string,
      HelperAnswer<{
        readonly score: number;
        readonly cleared: boolean;
        readonly findings: readonly string[];
      }>
    >
  >;
  /** The BLOCKED_ON verifier's last answer, kept the same way. */
  readonly verified?: HelperAnswer<{ readonly real: boolean; readonly reason: string }>;
  /**
   * Gates that failed on the story's last checked commit only as they failed on its base
   * (red there already): tolerated, and listed in the report with the stories they touched.
   */
  readonly inherited?: readonly string[];
  /** For each of those gates: the failing tests or lines that were red on the base. */
  readonly inheritedLines?: readonly InheritedGate[];
  /**
   * The story's task plan with its ticks (`tasks: true`): the checkpoint a resumed story
   * continues from. Empty: the story runs without tasks (its planning said why, in a note).
   */
  readonly tasks?: readonly StoryTask[];
  /**
   * The judge's findings below critical the story's last clearing verdict deferred
   * (`judge.deferNonBlocking`): listed under the story as "Deferred".
   */
  readonly deferred?: readonly string[];
  /** The follow-up round over deferred findings the story runs (or ran) (`/resume deferred`). */
  readonly deferredRound?: DeferredRound;
  /** A note for the story's next coder prompts, from a retro fix a person approved. */
  readonly retroNote?: string;
  /** Every review and judge round of the story, in order (its findings log is made of them). */
  readonly evaluations?: readonly Evaluation[];
  /**
   * What the coder asked for on the story's sub-issue that `issueTools` allows; the publish
   * job decides again from its own configuration and applies it (`core/story/issue-requests.ts`).
   */
  readonly issueRequests?: IssueRequests;
}

/** Labels and assignees a coder asked for on its story's sub-issue. */
export interface IssueRequests {
  readonly addLabels: readonly string[];
  readonly removeLabels: readonly string[];
  readonly assignees: readonly string[];
}

/** One review or judge round as a decision tells it (`Evaluation` without the attempt). */
export interface EvaluationRound {
  /** `review`: the lenses of `review.lenses`; `judge`: the judge's verdict. */
  readonly kind: 'review' | 'judge';
  /** 1 for the story's first round of this kind in the attempt, then 2, … */
  readonly round: number;
  /** The commit the round read. */
  readonly commit: string;
  readonly cleared: boolean;
  /** What must change (a review's prefixed with its lens: `tests: …`). */
  readonly findings: readonly string[];
  /** A review's score per lens, a judge's per dimension (0–2). */
  readonly scores: Readonly<Record<string, number>>;
  /** Who answered: one executor per lens, or the judge. */
  readonly executors: readonly string[];
  /** What followed: the coder fixes, the findings go on open, the story passes or fails. */
  readonly outcome: 'fixing' | 'open' | 'passed' | 'failed';
}

/** One review or judge round in a story's record. */
export interface Evaluation extends EvaluationRound {
  readonly attempt: number;
}

/** One task of a story's task plan. */
export interface StoryTask {
  readonly title: string;
  /** What shows it is done. */
  readonly outcome: string;
  readonly paths: readonly string[];
  /** The acceptance lines it satisfies, counted from 1. */
  readonly satisfies: readonly number[];
  /** Ticked: its turn and the gates after it passed. */
  readonly done: boolean;
  /** The branch head when it was ticked. */
  readonly commit?: string;
  /** The "Findings" its turn ended with, for the next task's prompt. */
  readonly findings?: string;
}

/** One follow-up round of a story over the findings its judge deferred. */
export interface DeferredRound {
  readonly findings: readonly string[];
  /** The story's merge the round revises: while it is still the newest, the story is not done. */
  readonly supersedes?: string;
}

/**
 * A judge's or verifier's answer as a story's record keeps it: with the fingerprint
 * (sha256) of everything the call read — its prompt (the story, what it provides, the
 * rubric, the house rules), the diff or the commit it looked at, and the executor that
 * answered (harness, model, arguments) — so that the first such call of a later run of
 * the story over the same fingerprint reuses it instead of paying for it again.
 */
export interface HelperAnswer<T> {
  readonly fingerprint: string;
  readonly executor: string;
  readonly answer: T;
}

/** A review comment as a story's record carries it into its next run (text still untrusted). */
export interface RevisionComment {
  /** `line:<id>`, `review:<id>` or `comment:<id>`: which comment on the pull request. */
  readonly key: string;
  readonly path?: string;
  /** The line; null when it is no longer in the diff. */
  readonly line?: number | null;
  /** The line is one of the old version (`LEFT`): removed, or in a file this pull request deletes. */
  readonly removed?: true;
  readonly author: string;
  readonly body: string;
}

/** The review round a story runs again for. */
export interface Revision {
  readonly round: number;
  /** The story's merge the round revises: while it is still the newest, the story is not done. */
  readonly supersedes?: string;
  readonly comments: readonly RevisionComment[];
}

/** Why an epic stopped launching stories (docs/commands.md). */
export type HaltKind =
  | 'roster-exhausted'
  | 'budget'
  | 'cancel'
  | 'outside-change'
  | 'interrupted'
  /** The plan differs from the one a user with write permission approved. */
  | 'plan-unapproved'
  /** Bringing the default branch into the epic branch failed (GitHub: a `land-<n>` job). */
  | 'land-failed'
  /** The epic's pull request was closed without being merged. */
  | 'pr-closed';

export interface Halt {
  readonly kind: HaltKind;
  /** One line for people, e.g. "budget of $50.00 spent ($51.20)". */
  readonly message: string;
  /** When the halt may lift (ISO time), e.g. an executor's usage-limit reset. */
  readonly until?: string;
  /** What people do to lift it, when the halt knows (a failed landing names its paths). */
  readonly nextStep?: string;
  /** A budget halt's facts: which limit, its value, what was spent (decisions read these, never the message). */
  readonly budget?: {
    readonly unit: 'usd' | 'tokens';
    readonly limit: number;
    readonly spent: number;
  };
}

/** The halt of a spent budget. */
export interface BudgetHalt extends Halt {
  readonly kind: 'budget';
  readonly budget: {
    readonly unit: 'usd' | 'tokens';
    readonly limit: number;
    readonly spent: number;
  };
}

/** Renders an executor chain the way trailers and reports show it: `codex → claude`. */
export function formatChain(executors: readonly string[]): string {
  return executors.join(' → ');
}

/** Branch names: `epic/<epic>` and `story/<epic>/<story>`. */
export function epicBranchName(epic: string): string {
  return `epic/${epic}`;
}

export function storyBranchName(epic: string, story: string): string {
  return `story/${epic}/${story}`;
}

export const ZERO_TOKENS: TokenCounts = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 };

export function addTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input + b.input,
    cachedInput: a.cachedInput + b.cachedInput,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output,
  };
}

export function totalTokens(t: TokenCounts): number {
  return t.input + t.cachedInput + t.cacheWrite + t.output;
}
