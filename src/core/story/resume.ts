/**
 * Where the rounds of a resumed story start. A story interrupted after its coder
 * committed (a crash, SIGINT, a job that died) must not pay for that turn again: the
 * record's `progress` says which commit the attempt reached and what it passed there,
 * and the branch says whether that commit is still the story. The policy, in one place:
 *
 * - nothing committed by this attempt, or a branch without changes: a coder turn;
 * - otherwise: the checks (gates, perimeter, oracle) on the branch as it is, which decide
 *   on a coder turn; passing, the judge when one is configured, then the merge. The
 *   checks are never skipped on the word of a record: records live where code of an
 *   agent that ran as epicflow's own user could have written them, and a commit is
 *   merged only once epicflow's own checks passed on it in this run.
 */
import type { ExecutorConfig } from '../config/types.js';
import type { StoryProgress } from '../model.js';
import { startRounds } from './lifecycle.js';
import type { Decision, RoundRules } from './rounds.js';

/** What a resume is decided on. */
export interface ResumeFacts {
  /** The record's progress, when the run continues the same attempt's work (same plan entry). */
  readonly progress: StoryProgress | undefined;
  /** The story branch's head, after catching up with the epic head. */
  readonly head: string;
  /** The branch changes something against the epic base. */
  readonly changed: boolean;
  readonly judge: boolean;
}

export type ResumePoint = { readonly kind: 'code' } | { readonly kind: 'check' };

export function resumePoint(facts: ResumeFacts): ResumePoint {
  if (facts.progress === undefined || !facts.changed) return { kind: 'code' };
  return { kind: 'check' };
}

/** The rounds of a story starting at `point` (a coder turn: `startRounds`). */
export function resumeRounds(
  rules: RoundRules,
  executor: ExecutorConfig,
  chain: readonly string[],
  point: ResumePoint,
): Decision {
  const start = startRounds(rules, executor, chain);
  const { state } = start;
  switch (point.kind) {
    case 'code':
      return start;
    case 'check':
      return {
        state: { ...state, awaiting: { step: 'check' } },
        effects: [{ kind: 'say', message: 'resuming: checking the committed work first' }],
        next: { kind: 'check' },
      };
  }
}
