/**
 * Which plan a user with write permission approved (PRODUCT §11: only they
 * steer an epic). The author of an epic issue may always edit it, with or
 * without write permission, and every decision reads the issue as it is now;
 * so a decision starts stories only from a plan someone with write permission
 * approved. The epic document keeps the approved plan's hash.
 *
 * A trigger approves the current plan when a person with write permission
 * acts on the epic as a whole: the label, an edit (of the issue, or of its
 * sub-issues), `/resume` and `/retry`. The shell hands over these triggers
 * only when their sender has write permission. `/status`, `/skip` and
 * `/cancel` do not approve: they look at, narrow or stop the epic, and must
 * not silently accept a plan nobody reviewed. Finished story runs never do.
 */
import { createHash } from 'node:crypto';
import type { Halt, Plan } from '../model.js';
import { canonicalJson } from '../plan/index.js';
import type { Trigger } from './types.js';

const APPROVING: ReadonlySet<Trigger['kind']> = new Set(['label', 'edited', 'resume', 'retry']);

/** Whether this trigger approves the plan as it stands (its sender has write permission). */
export function approvesPlan(trigger: Trigger): boolean {
  return APPROVING.has(trigger.kind);
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

export type PlanApproval =
  /** The current plan is the approved one: nothing to do. */
  | { readonly kind: 'approved' }
  /** This trigger approves a plan that is not on file yet: record its hash. */
  | { readonly kind: 'approve'; readonly plan: string }
  /** Not approved: start nothing until someone with write permission approves it. */
  | { readonly kind: 'hold'; readonly halt: Halt };

/**
 * Where the current plan stands. Epics started before approvals were recorded
 * (no hash on file) are held too, until the next approving trigger records
 * the plan as it then is: their issue may have been edited by anyone, and a
 * one-time `/resume` is cheaper than running unreviewed text.
 */
export function planApproval(input: {
  readonly plan: Plan;
  readonly approvedPlan: string | undefined;
  readonly trigger: Trigger;
}): PlanApproval {
  const current = planDigest(input.plan);
  if (input.approvedPlan === current) return { kind: 'approved' };
  if (approvesPlan(input.trigger)) return { kind: 'approve', plan: current };
  const message =
    input.approvedPlan === undefined ? PLAN_APPROVAL_MISSING_MESSAGE : PLAN_UNAPPROVED_MESSAGE;
  // Not persisted: recomputed by every decision, and gone once the plan is approved.
  return { kind: 'hold', halt: { kind: 'plan-unapproved', message } };
}
