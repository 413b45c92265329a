/**
 * A small in-memory GitHub for reconcile scenarios: it applies the actions the
 * way the App's adapter does (records, halts, sub-issues, sticky comments) and
 * lets a test play the story jobs (merge or fail a dispatched story).
 */
import { DEFAULT_CONFIG } from '../../../src/core/config/index.js';
import type { EpicflowConfig } from '../../../src/core/config/index.js';
import type {
  Action,
  DispatchedRun,
  ReconcileInput,
  SubIssueRef,
  Trigger,
} from '../../../src/core/epic/index.js';
import { planDigest, reconcile } from '../../../src/core/epic/index.js';
import type { Halt, Plan, Story, StoryRecord } from '../../../src/core/model.js';
import { buildPlan } from '../../../src/core/plan/index.js';

export const EPIC = { number: 12, title: 'Checkout rewrite' };
export const NOW = '2026-11-30T10:00:00.000Z';

export function story(
  id: string,
  dependsOn: readonly string[] = [],
  description = `Build ${id}.`,
): Story {
  return {
    id,
    title: `Story ${id}`,
    description,
    owns: [`src/${id}/`],
    reads: [],
    dependsOn,
    provides: [],
    acceptance: [],
    testsChange: false,
  };
}

/** a → b, a → c, b + c → d; e stands alone. */
export function diamondPlan(): Plan {
  return buildPlan([
    story('a'),
    story('b', ['a']),
    story('c', ['a']),
    story('d', ['b', 'c']),
    story('e'),
  ]);
}

export interface Dispatch {
  readonly story: string;
  readonly attempt: number;
  readonly fresh: boolean;
}

export class World {
  plan: Plan;
  config: EpicflowConfig;
  /** Coder slots of the whole roster; each active story holds one. */
  coderSlots = Infinity;
  records: Record<string, StoryRecord> = {};
  merged = new Map<string, string>();
  halt: Halt | undefined;
  /** The plan a user with write permission approved: the starting plan, unless a test says otherwise. */
  approvedPlan: string | undefined;
  /** Each story's entry hash in the approved plan, as the epic document records them. */
  approvedStories: Record<string, string> | undefined;
  /** The plan the last decision was made on: the issue body before an edit. */
  private decidedPlan: Plan;
  subIssues: Record<string, SubIssueRef> = {};
  pr: { number: number; draft: boolean } | undefined;
  branchEnsured = false;
  dispatched: Dispatch[] = [];
  replies: string[] = [];
  /** Sticky comments by marker (status, report, failure:<id>:<n>). */
  comments = new Map<string, string>();
  finished = false;
  now = NOW;
  /** What the shell found about overdue dispatches' runs (see `overdueDispatches`). */
  runs: Record<string, DispatchedRun> | undefined;
  private nextIssue = 100;

  constructor(plan: Plan = diamondPlan(), config: Partial<EpicflowConfig> = {}) {
    this.plan = plan;
    this.approvedPlan = planDigest(plan);
    this.approvedStories = { ...plan.hashes };
    this.decidedPlan = plan;
    this.config = { ...DEFAULT_CONFIG, ...config };
  }

  input(trigger: Trigger): ReconcileInput {
    return {
      epic: EPIC,
      plan: this.plan,
      records: structuredClone(this.records),
      merged: new Map(this.merged),
      config: this.config,
      freeCoderSlots: Math.max(
        0,
        this.coderSlots - Object.values(this.records).filter((r) => r.status === 'active').length,
      ),
      halt: this.halt,
      approvedPlan: this.approvedPlan,
      approvedStories: this.approvedStories,
      dispatchedRuns: this.runs,
      subIssues: { ...this.subIssues },
      pr: this.pr,
      now: this.now,
      trigger,
    };
  }

  /** Decides and applies; returns the actions. */
  step(trigger: Trigger): Action[] {
    const actions = reconcile(this.input(trigger));
    this.apply(actions);
    this.decidedPlan = this.plan;
    return actions;
  }

  /**
   * A writer's edit of the issue body that turned the plan last decided on into
   * `this.plan` (the webhook's `changes.body.from` held the plan before).
   */
  bodyEdit(): Trigger {
    return {
      kind: 'edited',
      bodyPlan: { before: planDigest(this.decidedPlan), after: planDigest(this.plan) },
    };
  }

  apply(actions: readonly Action[]): void {
    for (const a of actions) {
      switch (a.kind) {
        case 'approve-plan':
          // The orchestrator records the decided plan's entry hashes with its digest.
          this.approvedPlan = a.plan;
          this.approvedStories = { ...this.plan.hashes };
          break;
        case 'set-halt':
          this.halt = a.halt;
          break;
        case 'clear-halt':
          this.halt = undefined;
          break;
        case 'reply':
          this.replies.push(a.body);
          break;
        case 'ensure-epic-branch':
          this.branchEnsured = true;
          break;
        case 'ensure-draft-pr':
          this.pr ??= { number: 50, draft: true };
          break;
        case 'ensure-sub-issue':
          this.subIssues[a.story] ??= { number: this.nextIssue++, state: 'open' };
          break;
        case 'close-sub-issue':
        case 'reopen-sub-issue': {
          const sub = this.subIssues[a.story];
          if (sub === undefined) throw new Error(`no sub-issue for ${a.story}`);
          this.subIssues[a.story] = {
            ...sub,
            state: a.kind === 'close-sub-issue' ? 'closed' : 'open',
          };
          break;
        }
        case 'comment-sub-issue-failure':
          this.comments.set(a.marker, a.body);
          break;
        case 'record':
          this.records[a.record.story] = a.record;
          break;
        case 'dispatch':
          this.dispatched.push({ story: a.story, attempt: a.attempt, fresh: a.fresh });
          break;
        case 'update-board':
          break;
        case 'ensure-status-comment':
        case 'ensure-report-comment':
          this.comments.set(a.marker, a.body);
          break;
        case 'mark-pr-ready':
          if (this.pr !== undefined) this.pr = { ...this.pr, draft: false };
          break;
        case 'finish':
          this.finished = true;
          break;
      }
    }
  }

  /** The story job merges its story and records it done. */
  jobMerges(id: string, sha = `${id.padEnd(7, '0')}0123456789abcdef0123456789abcdef`): void {
    const r = this.recordOf(id);
    this.merged.set(id, sha);
    this.records[id] = { ...r, status: 'done', mergeCommit: sha, executors: ['codex'] };
  }

  /** The story job records a failure. */
  jobFails(id: string, reason: string): void {
    const r = this.recordOf(id);
    this.records[id] = { ...r, status: 'failed', reason, executors: ['codex'] };
  }

  recordOf(id: string): StoryRecord {
    const r = this.records[id];
    if (r === undefined) throw new Error(`no record for ${id}`);
    return r;
  }

  status(): string {
    return this.comments.get('status') ?? '';
  }
}

export function kinds(actions: readonly Action[]): string[] {
  return actions.map((a) => a.kind);
}

export function dispatches(actions: readonly Action[]): Dispatch[] {
  return actions.flatMap((a) =>
    a.kind === 'dispatch' ? [{ story: a.story, attempt: a.attempt, fresh: a.fresh }] : [],
  );
}

export function recordsIn(actions: readonly Action[]): StoryRecord[] {
  return actions.flatMap((a) => (a.kind === 'record' ? [a.record] : []));
}

export function completed(id: string, attempt = 1, conclusion = 'success'): Trigger {
  return { kind: 'workflow_run', story: id, attempt, conclusion };
}
