/**
 * One story's state within a decision: what the branch and the record say,
 * and what the trigger (a command, a finished job run) changes about it.
 */
import type { StoryRecord, StoryStatus, Story } from '../model.js';
import { epicBranchName } from '../model.js';
import { blankRecord, effectiveStatus, mergedRecord, withoutReason } from './rules.js';
import { PLAN_CHANGED_NOTE } from './comments.js';
import { endedWithoutOutcome, strandedReason } from './dispatch-check.js';
import { neutralizeMentions, sanitizeIssueText } from './sanitize.js';
import type { ReconcileInput } from './types.js';

/** The epic's id in branch names and records. */
export function epicIdOf(input: Pick<ReconcileInput, 'epic' | 'epicId'>): string {
  return input.epicId ?? String(input.epic.number);
}

/** Statuses `/skip` applies to: a running story is left to finish first. */
const SKIPPABLE: ReadonlySet<StoryStatus> = new Set(['planned', 'waiting', 'failed']);

/** Where a story stands while the decision is being made. */
export interface Entry {
  readonly story: Story;
  readonly wave: number;
  readonly hash: string;
  /** The story's merge on the epic branch (undefined while a review round revises it). */
  mergeCommit: string | undefined;
  /** The record as read. */
  readonly prior: StoryRecord | undefined;
  /** The record as it should be after this decision (undefined: none yet). */
  current: StoryRecord | undefined;
  /** Shown on this decision's comments only (derived facts, never persisted). */
  readonly display: string[];
  /** A failure derived from outside facts, shown but not persisted. */
  derivedFailure?: string;
}

/** Where a story stands for scheduling and display: the branch first, then derived facts, then the record. */
export function statusOf(e: Entry): StoryStatus {
  return effectiveStatus({
    mergeCommit: e.mergeCommit,
    derivedFailure: e.derivedFailure,
    record: e.current,
  });
}

/**
 * Facts that hold whatever the trigger: merged (from the branch) wins over
 * records; a `done` record without a merge commit is a skipped story; a
 * recorded merge that is no longer on the epic branch is a failure to look
 * at; a started story whose plan entry changed is flagged until `/resume`; an
 * active story whose run never started, or ended without its job recording an
 * outcome, failed.
 */
export function settle(input: ReconcileInput, e: Entry): Entry {
  const { prior } = e;
  const epicBranch = epicBranchName(epicIdOf(input));
  if (e.mergeCommit !== undefined) {
    const base = prior ?? newRecord(epicIdOf(input), e);
    const merged = mergedRecord(base, e.mergeCommit, input.now);
    if (merged !== prior) e.current = merged;
    return e;
  }
  if (prior === undefined) return e;
  if (prior.status === 'done' && prior.mergeCommit !== undefined) {
    e.derivedFailure = `merge ${prior.mergeCommit.slice(0, 7)} is no longer on ${epicBranch}`;
    return e;
  }
  const stranded = strandedReason(prior, input.dispatchedRuns?.[e.story.id], input.now);
  if (stranded !== undefined) {
    e.current = { ...prior, status: 'failed', reason: stranded, finishedAt: input.now };
  }
  const started = prior.startedAt !== undefined;
  if (
    started &&
    prior.planHash !== e.hash &&
    (prior.status === 'active' || prior.status === 'failed')
  ) {
    e.display.push(PLAN_CHANGED_NOTE);
  }
  return e;
}

/** The trigger's own effect on one story: commands and a finished job run. */
export function applyTrigger(input: ReconcileInput, e: Entry, replies: string[]): void {
  const { trigger, now } = input;
  const id = e.story.id;
  const cur = e.current;
  const effective: StoryStatus | undefined =
    e.mergeCommit !== undefined ? 'done' : e.derivedFailure !== undefined ? 'failed' : cur?.status;
  switch (trigger.kind) {
    case 'workflow_run': {
      if (trigger.story !== id || e.mergeCommit !== undefined) return;
      if (cur?.status !== 'active' || cur.attempt !== trigger.attempt) return;
      // The job writes its outcome before it ends; an active record now means it died first.
      e.current = {
        ...cur,
        status: 'failed',
        reason: endedWithoutOutcome(trigger.conclusion),
        finishedAt: now,
      };
      return;
    }
    case 'retry': {
      if (trigger.story !== id) return;
      if (effective !== 'failed' || cur === undefined) {
        replies.push(
          notApplicable('retry', id, effective, cur, 'only a failed story can be retried'),
        );
        return;
      }
      e.current = again(e, cur, `retried by @${login(trigger.by)}`);
      return;
    }
    case 'skip': {
      if (trigger.story !== id) return;
      const status = effective ?? 'planned';
      if (!SKIPPABLE.has(status)) {
        replies.push(
          notApplicable(
            'skip',
            id,
            effective,
            cur,
            status === 'active' ? 'it is running; skip it once it stops' : 'it is already done',
          ),
        );
        return;
      }
      const base = withoutReason(cur ?? newRecord(epicIdOf(input), e));
      const { mergeCommit: _m, ...rest } = base;
      e.current = {
        ...rest,
        status: 'done',
        notes: [...rest.notes, `skipped by @${login(trigger.by)}`],
        finishedAt: now,
      };
      delete e.derivedFailure;
      return;
    }
    case 'resume': {
      if (cur === undefined || e.mergeCommit !== undefined) return;
      const changed = cur.startedAt !== undefined && cur.planHash !== e.hash;
      if (effective === 'failed' || (effective === 'active' && changed)) {
        e.current = again(e, cur, `resumed by @${login(trigger.by)}`);
      }
      return;
    }
    case 'rerun': {
      if (cur === undefined || e.mergeCommit !== undefined) return;
      const changed = cur.planHash !== e.hash;
      const doneWithoutMerge = effective === 'done' && cur.mergeCommit === undefined;
      if (effective === 'failed' || (changed && (effective === 'active' || doneWithoutMerge))) {
        e.current = again(e, cur, undefined);
      }
      return;
    }
    default:
      return;
  }
}

/**
 * A story to run again: continue on its branch (next attempt at dispatch), or,
 * when its plan entry changed, restart from the epic head with a new attempt
 * right away, so a job still running the old attempt knows it is superseded.
 */
function again(e: Entry, cur: StoryRecord, note: string | undefined): StoryRecord {
  delete e.derivedFailure;
  const { mergeCommit: _m, ...rest } = withoutReason(cur);
  const started = cur.startedAt !== undefined;
  if (started && cur.planHash !== e.hash) {
    const { startedAt: _s, finishedAt: _f, ...restart } = rest;
    e.display.length = 0;
    const changed = 'plan entry changed: restarted from the epic head';
    return {
      ...restart,
      status: 'planned',
      attempt: cur.attempt + 1,
      notes: [...rest.notes, note === undefined ? changed : `${note}; ${changed}`],
    };
  }
  return {
    ...rest,
    status: 'planned',
    notes: note === undefined ? rest.notes : [...rest.notes, note],
  };
}

function notApplicable(
  command: 'retry' | 'skip',
  id: string,
  status: StoryStatus | undefined,
  record: StoryRecord | undefined,
  why: string,
): string {
  const where = status ?? 'planned';
  const reason = where === 'waiting' && record?.reason !== undefined ? ` (${record.reason})` : '';
  return `\`/${command} ${id}\`: story \`${id}\` is ${where}${neutralizeMentions(sanitizeIssueText(reason))}; ${why}.`;
}

export function newRecord(epic: string, e: Pick<Entry, 'story' | 'hash'>): StoryRecord {
  return blankRecord(epic, e.story.id, e.hash);
}

export function sameRecord(a: StoryRecord | undefined, b: StoryRecord): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/** GitHub logins are `[A-Za-z0-9-]`; anything else never reaches a comment. */
export function login(name: string): string {
  return name.replace(/[^A-Za-z0-9-]/g, '');
}
