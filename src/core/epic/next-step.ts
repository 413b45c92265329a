/**
 * The next step an epic's status and report comments end with: one sentence of
 * epicflow's own markdown saying what the reader can do now (review, approve the plan,
 * `/resume` after a halt, `/retry` or `/skip` a failed story, a follow-up round over
 * deferred findings), from the facts `reconcile` gathered.
 */
import type { Halt } from '../model.js';
import { formatUtcTime } from '../report/format.js';

interface NextStepFacts {
  readonly allDone: boolean;
  readonly halt: Halt | undefined;
  /** Set when the plan is not the one a user with write permission approved. */
  readonly unapproved: Halt | undefined;
  readonly pr: { readonly number: number } | undefined;
  readonly now: string;
  readonly failed: readonly string[];
  readonly running: number;
  readonly changed: boolean;
  /** The unapproved plan is the planner's proposal. */
  readonly proposed?: boolean;
  /** The findings a follow-up round would take, for people (undefined: none). */
  readonly deferred?: string | undefined;
}

/** One sentence of epicflow's own markdown: what the reader can do now. */
export function nextStepText(f: NextStepFacts): string {
  if (f.allDone) {
    const pr = f.pr === undefined ? 'The pull request' : `Pull request #${f.pr.number}`;
    if (f.deferred !== undefined) {
      return `Every story is done; ${f.deferred} (listed under Deferred). Comment \`/resume deferred\` for one follow-up round over them, or review ${pr.charAt(0).toLowerCase()}${pr.slice(1)} as it is.`;
    }
    return `Every story is done. ${pr} is ready for review.`;
  }
  if (f.unapproved !== undefined && f.proposed === true && f.halt === f.unapproved) {
    return "Check the plan epicflow's planner wrote into the issue: a user with write permission edits it or comments `/approve` to start it (`/plan <feedback>` drafts it again).";
  }
  if (f.unapproved !== undefined) {
    // Another halt is shown instead: say here why /resume is needed besides.
    const lead = f.halt === f.unapproved ? 'A' : `${capitalize(f.unapproved.message)}: a`;
    return `${lead} user with write permission must check the plan and comment \`/resume\` to accept it; stories already running go on. \`/approve\` accepts it without retrying failed stories or lifting a \`/cancel\`.`;
  }
  if (f.halt !== undefined) {
    // A halt that knows its way out says it (a failed landing names the paths to resolve).
    if (f.halt.nextStep !== undefined) return f.halt.nextStep;
    const after = f.halt.until === undefined ? '' : ` after ${formatUtcTime(f.halt.until, f.now)}`;
    switch (f.halt.kind) {
      case 'budget':
        return 'Raise `budget` in the epicflow configuration, then comment `/resume`.';
      case 'roster-exhausted':
        return `Comment \`/resume\`${after} once an executor is available again.`;
      case 'outside-change':
        return 'Check the epic branch (it was changed outside epicflow), then comment `/resume`.';
      default:
        return `Comment \`/resume\`${after} to continue.`;
    }
  }
  if (f.failed.length > 0) {
    const first = f.failed[0] ?? '';
    const running = f.running > 0 ? `${f.running} running; ` : '';
    return `${running}fix the cause of the failure, then comment \`/retry ${first}\` (or \`/resume\` to retry every failed story), or \`/skip ${first}\` to go on without it.`;
  }
  if (f.changed) return 'Comment `/resume` to restart the stories whose plan entry changed.';
  return 'Nothing to do: running stories report here as they finish.';
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
