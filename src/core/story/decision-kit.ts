/**
 * The small constructors every decision on a story's rounds is made of: tell, stop,
 * a coder turn, the end of a task, and the check that a result is the one awaited.
 * Internal to core/story (not exported from its index).
 */
import { EpicflowError } from '../errors.js';
import type { PromptFeedback } from '../prompt/index.js';
import type { Awaiting, StoryRounds, StoryEffect, Decision, HelperRetries } from './rounds.js';
import type { Outgrown } from '../model.js';

export const say = (message: string, data?: Readonly<Record<string, unknown>>): StoryEffect =>
  data === undefined ? { kind: 'say', message } : { kind: 'say', message, data };

/**
 * A checked commit the reviewers are done with: to the judge (after taking the epic head
 * when it moved), or merged when there is no judge.
 */
export function toJudgeOrMerge(state: StoryRounds, effects: readonly StoryEffect[]): Decision {
  if (state.rules.judgeRounds === undefined) {
    return {
      state: { ...state, awaiting: { step: 'end' } },
      effects,
      next: { kind: 'integrate', commit: state.checked },
    };
  }
  return {
    state: { ...state, awaiting: { step: 'catch-up' } },
    effects,
    next: { kind: 'catch-up' },
  };
}

export function stop(
  state: StoryRounds,
  status: 'failed' | 'waiting',
  reason: string,
  effects: readonly StoryEffect[] = [],
  outgrown?: Outgrown,
): Decision {
  return {
    state: { ...state, awaiting: { step: 'end' } },
    effects,
    next: { kind: 'stop', status, reason, ...(outgrown === undefined ? {} : { outgrown }) },
  };
}

export function code(
  state: StoryRounds,
  feedback: PromptFeedback | undefined,
  effects: readonly StoryEffect[] = [],
  waitMs = 0,
): Decision {
  return {
    state: { ...state, awaiting: { step: 'turn' }, feedback },
    effects,
    next: { kind: 'code', feedback, waitMs },
  };
}

export function expecting<S extends Awaiting['step']>(
  state: StoryRounds,
  step: S,
): Extract<Awaiting, { step: S }> {
  if (state.awaiting.step !== step) {
    throw new EpicflowError(
      'internal',
      `story rounds: a ${step} result while waiting for a ${state.awaiting.step} result`,
    );
  }
  return state.awaiting as Extract<Awaiting, { step: S }>;
}

export function taskDone(
  state: StoryRounds,
  commit: string | undefined,
  effects: readonly StoryEffect[],
): Decision {
  return {
    state: { ...state, awaiting: { step: 'end' } },
    effects,
    next: { kind: 'task-done', commit },
  };
}

/** A kept answer reused instead of a call: said, and noted on the story for its report. */
export function reusedEffects(note: string): StoryEffect[] {
  return [say(note), { kind: 'note', notes: [note] }];
}

/** The state with what a helper call spent of the story's retries. */
export function withHelperRetries(state: StoryRounds, facts: HelperRetries): StoryRounds {
  return facts.transientRetries === undefined
    ? state
    : { ...state, transientRetries: facts.transientRetries };
}
