/**
 * Where the rounds of a resumed story start. A story interrupted after its coder
 * committed (a crash, SIGINT, a job that died) must not pay for that turn again: the
 * record's `progress` says which commit the attempt reached and what it passed there,
 * and the branch says whether that commit is still the story. The policy, in one place:
 *
 * - nothing committed by this attempt, or a branch without changes: a coder turn;
 * - the branch is the commit that passed the checks (and the judge, when one is
 *   configured): it is merged again, with the epic's gates on the merged tree;
 * - the branch is the commit that passed the checks and a judge is configured: the judge;
 * - otherwise (committed, not checked; or the branch moved since, e.g. it caught up
 *   with a newer epic head): the checks, which decide on a coder turn.
 */
import type { ExecutorConfig } from '../config/types.js';
import type { StoryProgress } from '../model.js';
import { startRounds, type Decision, type RoundRules } from './lifecycle.js';

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

export type ResumePoint =
  | { readonly kind: 'code' }
  | { readonly kind: 'check' }
  | { readonly kind: 'judge'; readonly commit: string }
  | { readonly kind: 'integrate'; readonly commit: string };

export function resumePoint(facts: ResumeFacts): ResumePoint {
  const { progress, head } = facts;
  if (progress === undefined || !facts.changed) return { kind: 'code' };
  if (progress.commit !== head || progress.passed === 'none') return { kind: 'check' };
  if (progress.passed === 'checks' && facts.judge) return { kind: 'judge', commit: head };
  return { kind: 'integrate', commit: head };
}

const short = (sha: string): string => sha.slice(0, 12);

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
    case 'judge':
      return {
        state: { ...state, checked: point.commit, awaiting: { step: 'judge', inPlace: false } },
        effects: [
          {
            kind: 'say',
            message: `resuming: ${short(point.commit)} passed its checks; asking the judge`,
          },
        ],
        next: { kind: 'judge', inPlace: false },
      };
    case 'integrate':
      return {
        state: { ...state, checked: point.commit, awaiting: { step: 'end' } },
        effects: [
          {
            kind: 'say',
            message: `resuming: ${short(point.commit)} passed its checks; merging it without a coder turn`,
          },
        ],
        next: { kind: 'integrate', commit: point.commit },
      };
  }
}
