/**
 * Which plan a user with write permission approved (only they steer an
 * epic). The author of an epic issue may always edit it, with or
 * without write permission, and every decision reads the issue as it is now;
 * so a decision starts stories only from a plan someone with write permission
 * approved. The epic document keeps the approved plan's hash, and each story's.
 *
 * A plan is approved only by a person with write permission saying so: adding
 * the label, `/resume`, `/approve`, or an edit of the issue that changed the
 * plan in its body (they changed the plan themselves, so they have read it).
 * An edit that leaves the plan as it was (the title, prose around the plan
 * block) approves nothing: it would otherwise approve whatever someone without
 * write permission had put into the plan before. Neither do `/retry`,
 * `/skip`, `/cancel` and `/status`, a change of sub-issues, or a finished
 * story run. The shell hands over triggers only from senders with write
 * permission, and the facts of an edit from the webhook's `changes`.
 */
import { createHash } from 'node:crypto';
import type { Halt, Plan } from '../model.js';
import { canonicalJson } from '../plan/index.js';
import { code } from '../report/escape.js';
import type { Trigger } from './types.js';

/**
 * Whether this trigger approves the plan it was decided on (its sender has write
 * permission). An edit approves only when it changed the plan its body holds into
 * a valid one.
 */
export function approvesPlan(trigger: Trigger): boolean {
  switch (trigger.kind) {
    case 'label':
    case 'resume':
    case 'approve':
      return true;
    case 'edited': {
      const edit = trigger.bodyPlan;
      return edit !== null && edit.after !== null && edit.after !== edit.before;
    }
    default:
      return false;
  }
}

/**
 * A stable hash of the whole plan: each story's entry hash (which covers its
 * text, files and dependencies) in plan order, so adding, removing, reordering
 * or editing any story changes it.
 */
export function planDigest(plan: Plan): string {
  const entries = plan.stories.map((s) => [s.id, plan.hashes[s.id] ?? '']);
  return createHash('sha256').update(canonicalJson(entries)).digest('hex').slice(0, 16);
}

/** Why nothing new starts: the plan changed since a user with write permission approved it. */
export const PLAN_UNAPPROVED_MESSAGE =
  'the plan changed since a user with write permission approved it';

/** An epic started before approvals were recorded: nobody's approval is on file yet. */
export const PLAN_APPROVAL_MISSING_MESSAGE =
  'no approval of the plan by a user with write permission is recorded for this epic';

/** The stories of the current plan that are not as they were approved. */
export interface PlanChanges {
  /** In the plan now, not in the approved one. */
  readonly added: readonly string[];
  /** In the approved plan, not in the plan now. */
  readonly removed: readonly string[];
  /** In both, with another entry (text, files or dependencies). */
  readonly changed: readonly string[];
}

export type PlanApproval =
  /** The current plan is the approved one: nothing to do. */
  | { readonly kind: 'approved' }
  /** This trigger approves a plan that is not on file yet: record its hash. */
  | { readonly kind: 'approve'; readonly plan: string }
  /**
   * Not approved: start nothing until someone with write permission approves it.
   * `changes` is undefined when the approval on file does not say per story.
   */
  | { readonly kind: 'hold'; readonly halt: Halt; readonly changes?: PlanChanges | undefined };

/**
 * Where the current plan stands. Epics started before approvals were recorded
 * (no hash on file) are held too, until the next approving trigger records
 * the plan as it then is: their issue may have been edited by anyone, and a
 * one-time `/approve` is cheaper than running unreviewed text.
 */
export function planApproval(input: {
  readonly plan: Plan;
  readonly approvedPlan: string | undefined;
  /** Story id → entry hash of the approved plan, when the epic document records them. */
  readonly approvedStories?: Readonly<Record<string, string>> | undefined;
  readonly trigger: Trigger;
}): PlanApproval {
  const current = planDigest(input.plan);
  if (input.approvedPlan === current) return { kind: 'approved' };
  const { trigger } = input;
  // An edit approves the plan it produced: the one being decided on, and no other.
  const approves =
    approvesPlan(trigger) && (trigger.kind !== 'edited' || trigger.bodyPlan?.after === current);
  if (approves) return { kind: 'approve', plan: current };
  const missing = input.approvedPlan === undefined;
  const message = missing ? PLAN_APPROVAL_MISSING_MESSAGE : PLAN_UNAPPROVED_MESSAGE;
  // Not persisted: recomputed by every decision, and gone once the plan is approved.
  const halt: Halt = { kind: 'plan-unapproved', message };
  const known = input.approvedStories;
  return {
    kind: 'hold',
    halt,
    ...(missing || known === undefined ? {} : { changes: planChanges(input.plan, known) }),
  };
}

/** Stories added, removed or changed against the approved plan's entry hashes. */
function planChanges(plan: Plan, approved: Readonly<Record<string, string>>): PlanChanges {
  const ids = new Set(plan.stories.map((s) => s.id));
  return {
    added: plan.stories.filter((s) => approved[s.id] === undefined).map((s) => s.id),
    removed: Object.keys(approved)
      .filter((id) => !ids.has(id))
      .sort(),
    changed: plan.stories
      .filter((s) => approved[s.id] !== undefined && approved[s.id] !== plan.hashes[s.id])
      .map((s) => s.id),
  };
}

/** Story ids named in the status comment before the rest are counted. */
const IDS_SHOWN = 20;

/**
 * One line of markdown for the status comment: what is not approved yet. Story
 * ids are plan ids (letters, digits, `-`), shown as code.
 */
export function describeUnapproved(hold: Extract<PlanApproval, { kind: 'hold' }>): string {
  if (hold.halt.message === PLAN_APPROVAL_MISSING_MESSAGE) {
    return 'the whole plan: no approval is on file for this epic.';
  }
  const changes = hold.changes;
  if (changes === undefined) {
    return 'the approval on file does not say which stories it covered (it was recorded by an older epicflow): check the whole plan.';
  }
  const parts = [
    listed('changed', changes.changed),
    listed('added', changes.added),
    listed('removed', changes.removed),
  ].filter((p) => p !== '');
  // Same stories, same entries: only their order differs.
  if (parts.length === 0) return 'the order of the stories changed.';
  return `${parts.join('; ')}.`;
}

function listed(what: string, ids: readonly string[]): string {
  if (ids.length === 0) return '';
  const shown = ids.slice(0, IDS_SHOWN).map(code).join(', ');
  const more = ids.length > IDS_SHOWN ? `, … and ${ids.length - IDS_SHOWN} more` : '';
  return `${what} ${shown}${more}`;
}
