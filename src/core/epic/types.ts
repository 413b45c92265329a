/** The input and output vocabulary of `reconcile`. */
import type { ReportStory } from '../report/index.js';
import type { EpicflowConfig } from '../config/types.js';
import type { LandRecord } from '../land/index.js';
import type { Halt, Plan, StoryRecord } from '../model.js';
import type { ReportLinks, ReportPlanning } from '../report/index.js';
import type { BoardValues } from './board-values.js';
import type { DispatchedRun } from './dispatch-check.js';
import type { MarkerName } from './markers.js';
import type { PullChecks } from './pr-checks.js';
import type { ReviewAnswer, ReviewComment, ReviewDoc } from './review-types.js';

/**
 * What an edit of the epic issue did to the plan its body holds: the `planDigest`
 * of that plan before and after the edit (null: the body held no valid plan).
 */
export interface BodyPlanEdit {
  readonly before: string | null;
  readonly after: string | null;
}

/** What woke the App (or the orchestrating Action). Commands are already validated. */
export type Trigger =
  | { readonly kind: 'label' }
  /**
   * The epic issue was edited, or one of its sub-issues added or removed. `bodyPlan`
   * says what the edit did to the plan in the issue body; null when the body did not
   * change (a title edit) or the change was to the sub-issues.
   */
  | { readonly kind: 'edited'; readonly bodyPlan: BodyPlanEdit | null }
  | { readonly kind: 'status' }
  | { readonly kind: 'approve'; readonly by: string }
  | { readonly kind: 'resume'; readonly by: string }
  | { readonly kind: 'cancel'; readonly by: string }
  | { readonly kind: 'retry'; readonly story: string; readonly by: string }
  | { readonly kind: 'skip'; readonly story: string; readonly by: string }
  /**
   * `epicflow run` again (locally): what `/resume` does, with nobody to name — failed
   * stories run again, a story whose plan entry changed restarts, and one done without a
   * merge whose entry changed is done no more.
   */
  | { readonly kind: 'rerun' }
  /**
   * One follow-up round over the findings judges deferred (`/resume deferred`, `epicflow
   * run --deferred`; core/epic/deferred.ts): only once every story is done.
   */
  | { readonly kind: 'deferred'; readonly by?: string }
  /**
   * A review round was asked for on the epic's pull request (a review requesting
   * changes, or `/revise`), with every comment on it as listed (see core/epic/review.ts).
   */
  | {
      readonly kind: 'review';
      readonly by: string;
      readonly comments: readonly ReviewComment[];
    }
  /** A story job's workflow run completed (any conclusion). */
  | {
      readonly kind: 'workflow_run';
      readonly story: string;
      readonly attempt: number;
      readonly conclusion: string;
    };

export interface SubIssueRef {
  readonly number: number;
  readonly state: 'open' | 'closed';
}

export interface ReconcileInput {
  readonly epic: { readonly number: number; readonly title: string };
  /** The epic's id in branch names and records (local epics have names); default the number. */
  readonly epicId?: string;
  /** Start nothing new once a story failed (`epicflow run --fail-fast`). */
  readonly failFast?: boolean;
  /**
   * Stories that stopped waiting in a run of this decision's caller (interrupted, out of
   * executors): their own reason says more than a hold's, and is kept.
   */
  readonly ownWaitingReasons?: ReadonlySet<string>;
  /** A valid plan (plan hashes come from `plan.hashes`). */
  readonly plan: Plan;
  /** Durable story records by story id; a story may have none yet. */
  readonly records: Readonly<Record<string, StoryRecord>>;
  /** Story id → merge commit, derived from the epic branch's `Epicflow-Story` trailers. */
  readonly merged: ReadonlyMap<string, string>;
  readonly config: EpicflowConfig;
  /**
   * The roster's free coder slots (Infinity when unbounded), counting a slot as
   * busy for each story whose record is `active` in `records`.
   */
  readonly freeCoderSlots: number;
  /**
   * The current halt: the persisted one (`cancel`, `outside-change`,
   * `interrupted`) or one the caller computed (`roster-exhausted`). A spent
   * budget is computed here from the records.
   */
  readonly halt?: Halt | undefined;
  /**
   * Hash (`planDigest`) of the plan a user with write permission last approved,
   * from the epic document; undefined when none is recorded. While the current
   * plan differs, only a trigger that approves (see `approvesPlan`) starts stories.
   */
  readonly approvedPlan?: string | undefined;
  /**
   * Each story's plan hash in the approved plan, when the epic document records them
   * (approvals written before it recorded only `approvedPlan`): what an unapproved
   * plan added, removed or changed is then shown.
   */
  readonly approvedStories?: Readonly<Record<string, string>> | undefined;
  /**
   * What GitHub's runs say about the attempts of `active` records dispatched longer
   * than `DISPATCH_GRACE_MINUTES` ago, by story (see `overdueDispatches`); a story
   * not named was not looked up.
   */
  readonly dispatchedRuns?: Readonly<Record<string, DispatchedRun>> | undefined;
  /** Sub-issues found by their story marker, by story id. */
  readonly subIssues: Readonly<Record<string, SubIssueRef>>;
  /** Sub-issues this decision may create (default `SUB_ISSUES_PER_DECISION`; 0: none). */
  readonly subIssuesPerDecision?: number;
  readonly pr?:
    | {
        readonly number: number;
        readonly draft: boolean;
        /** The checks of its head commit, when they were read: shown, never acted on. */
        readonly checks?: PullChecks | undefined;
      }
    | undefined;
  /** ISO time of this decision. */
  readonly now: string;
  readonly trigger: Trigger;
  /** URL builders for branches and commits in the report comment. */
  readonly links?: ReportLinks | undefined;
  /** Linked when the report comment had to be shortened. */
  readonly fullReportUrl?: string | undefined;
  /** The review rounds so far, from the epic document. */
  readonly review?: ReviewDoc | undefined;
  /** The configuration files stories may not change (protected paths besides workflows). */
  readonly configPaths?: readonly string[] | undefined;
  /**
   * The planner drafted the plan (docs/planning.md): whether the plan is its proposal
   * nobody approved yet, and what planning cost (the report's Planning row).
   */
  readonly planning?:
    { readonly proposed: boolean; readonly report?: ReportPlanning | undefined } | undefined;
  /** The epic's landings (`land-<n>` jobs), shown below the stories in the report. */
  readonly landings?: readonly LandRecord[] | undefined;
}

export type Action =
  /** Persist `plan` (a `planDigest`) as the plan a user with write permission approved. */
  | { readonly kind: 'approve-plan'; readonly plan: string }
  /** Persist the epic's halt (a `/cancel`) so later decisions see it. */
  | { readonly kind: 'set-halt'; readonly halt: Halt }
  /** Forget the persisted halt (`/resume`). */
  | { readonly kind: 'clear-halt' }
  /** Persist the review part of the epic document. */
  | { readonly kind: 'set-review'; readonly review: ReviewDoc }
  /** Answer one review comment on the pull request (idempotent: found by its marker). */
  | { readonly kind: 'answer-review'; readonly answer: ReviewAnswer }
  /** A queued review round may start now: list the comments and decide again. */
  | { readonly kind: 'start-queued-review'; readonly by: string }
  /** Answer the comment that carried the command. */
  | { readonly kind: 'reply'; readonly body: string }
  | { readonly kind: 'ensure-epic-branch'; readonly branch: string }
  | {
      readonly kind: 'ensure-draft-pr';
      readonly head: string;
      readonly title: string;
      readonly body: string;
    }
  | {
      readonly kind: 'ensure-sub-issue';
      readonly story: string;
      readonly marker: MarkerName;
      readonly title: string;
      readonly body: string;
    }
  | { readonly kind: 'close-sub-issue'; readonly story: string }
  | { readonly kind: 'reopen-sub-issue'; readonly story: string }
  | {
      readonly kind: 'comment-sub-issue-failure';
      readonly story: string;
      readonly attempt: number;
      readonly reason: string;
      readonly marker: MarkerName;
      readonly body: string;
    }
  /** Write this record (compare-and-swap against the version this decision read). */
  | { readonly kind: 'record'; readonly record: StoryRecord }
  /**
   * Start the story's job. `fresh`: start from the epic head, setting any
   * existing story branch aside; otherwise continue on the existing branch.
   */
  | {
      readonly kind: 'dispatch';
      readonly story: string;
      readonly attempt: number;
      readonly fresh: boolean;
    }
  | { readonly kind: 'update-board'; readonly story: string; readonly values: BoardValues }
  | { readonly kind: 'ensure-status-comment'; readonly marker: MarkerName; readonly body: string }
  | {
      readonly kind: 'ensure-report-comment';
      readonly marker: MarkerName;
      readonly body: string;
      /** The rows the comment shows (the full report on the state branch shows the same). */
      readonly rows?: readonly ReportStory[];
    }
  | { readonly kind: 'mark-pr-ready' }
  /** Back to a draft while a review round runs (ready again once every story is done). */
  | { readonly kind: 'mark-pr-draft' }
  /** Every story is done: the epic is delivered. */
  | { readonly kind: 'finish' };
