/** What the orchestrator is told about an event, and what it needs to act on GitHub. */
import type { GitHubRepo } from '../adapters/github/index.js';
import type { RunOrigin } from '../core/epic/index.js';

/** Who sent the event: `type` is the webhook's `sender.type` ('User', 'Bot', …). */
export interface Sender {
  readonly login: string;
  readonly type: string;
}

/** An issue or pull request as a webhook payload carries it. */
export interface EventIssue {
  readonly number: number;
  readonly title: string;
  readonly body: string;
  readonly labels: readonly string[];
  /** Comments on pull requests arrive as issue comments on the pull request's number. */
  readonly isPullRequest: boolean;
}

export type EpicEvent =
  | {
      readonly kind: 'labeled';
      readonly issue: EventIssue;
      readonly label: string;
      readonly sender: Sender;
    }
  | {
      readonly kind: 'edited';
      readonly issue: EventIssue;
      readonly sender: Sender;
      /**
       * The body before this edit (the webhook's `changes.body.from`); absent when the
       * edit did not change the body (GitHub then sends no `changes.body`). Only an edit
       * that changed the plan in the body approves it, so without it nothing is approved.
       */
      readonly previousBody?: string;
    }
  | {
      readonly kind: 'comment';
      readonly issue: EventIssue;
      readonly body: string;
      readonly sender: Sender;
    }
  /** A review was submitted on a pull request (`pull_request_review.submitted`). */
  | {
      readonly kind: 'review';
      readonly pr: number;
      /** The pull request is open (a review of a closed one starts nothing). */
      readonly open: boolean;
      /** The pull request's head branch and the repository it lives in (null: deleted). */
      readonly head: { readonly ref: string; readonly repository: string | null };
      /** The review's state as the webhook says it: `changes_requested`, `commented`, `approved`. */
      readonly state: string;
      readonly sender: Sender;
    }
  /** A push (`ref` moved); only one to the default branch concerns epics (docs/landing.md). */
  | {
      readonly kind: 'push';
      readonly ref: string;
      readonly deleted: boolean;
      readonly sender: Sender;
    }
  /** A pull request was closed, merged or not (read from GitHub before anything is done). */
  | { readonly kind: 'pr-closed'; readonly number: number; readonly sender: Sender }
  /** A sub-issue was added to or removed from `parent` (a sub-issue plan may have changed). */
  | { readonly kind: 'sub-issues'; readonly parent: number; readonly sender: Sender }
  | {
      readonly kind: 'workflow-run';
      readonly runId: number;
      /** `.github/workflows/<file>` of the run. */
      readonly workflowPath: string;
      /** The run's evaluated `run-name` (`workflow_run.display_title`): names the story. */
      readonly displayTitle: string;
      readonly conclusion: string;
      /**
       * Where the run came from (the webhook's `workflow_run`): only a dispatch of the
       * story workflow on the default branch of this repository is a story run. When
       * absent, the run is read from GitHub (one request) to find out.
       */
      readonly origin?: RunOrigin;
      /** Id of the repository the event came from (the payload's `repository.id`), when known. */
      readonly repositoryId?: number;
    };

export interface OrchestratorLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface OrchestratorDeps {
  /** The repository, acting as the App's installation (its `botLogin` is ours). */
  readonly repo: GitHubRepo;
  /** The default branch when the webhook told us (saves a request); read otherwise. */
  readonly defaultBranch?: string;
  /** The story workflow's file name under `.github/workflows/` (default `epicflow-story.yml`). */
  readonly storyWorkflow?: string;
  readonly now?: () => Date;
  /** How a decision waits before deciding again after a lost compare-and-swap (default: real time). */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly log?: OrchestratorLog;
  /**
   * Whether this decision creates sub-issues still missing (default true). A story job's
   * own reconcile says false: it runs beside the decisions of the App (or the orchestrate
   * workflow) in another process, and two processes creating the same sub-issue at once
   * would make two. The decider of the epic's events creates them, a few each time.
   */
  readonly createsSubIssues?: boolean;
}

/** What one event came to, for logs and tests. */
export interface HandleResult {
  readonly outcome: 'ignored' | 'replied' | 'invalid-config' | 'invalid-plan' | 'reconciled';
  /** Why an event was ignored, in a few words. */
  readonly reason?: string;
  /** The epic issue the event belonged to, when known. */
  readonly epic?: number;
  /** Stories dispatched by this event (`story#attempt`). */
  readonly dispatched: readonly string[];
}

export const DEFAULT_STORY_WORKFLOW = 'epicflow-story.yml';
