/**
 * The decisions on a story's checks (gates against the baseline, the oracle guard, the
 * perimeter), on the catch-up before the judge, and on a merge that turned the epic head
 * red: a fix round, a perimeter round, a restore and a recheck, a merge revision, or on.
 */
import { describeStrays, isClean, strayPaths } from '../perimeter/index.js';
import type { PromptFeedback } from '../prompt/index.js';
import { blockingReason, describeVerdicts, INTERRUPTED } from './texts.js';
import type { StoryRounds, StoryEffect, Decision, CheckFacts } from './rounds.js';
import { say, stop, code, expecting, taskDone, toJudgeOrMerge } from './decision-kit.js';

/** A commit that passed every check goes to the reviewers, the judge, or is merged. */
function passed(state: StoryRounds, commit: string, told: readonly StoryEffect[]): Decision {
  const checked = { ...state, checked: commit };
  const effects = [...told, { kind: 'progress', progress: { commit, passed: 'checks' } } as const];
  if (state.rules.taskEnd === true) return taskDone(checked, commit, effects);
  if (state.rules.reviewRounds !== undefined) {
    const round = (state.reviews ?? 0) + 1;
    return {
      state: { ...checked, awaiting: { step: 'review' } },
      effects,
      next: { kind: 'review', round, previous: state.reviewFindings ?? [] },
    };
  }
  return toJudgeOrMerge(checked, effects);
}

/** What catching up before the judge did. */
export interface CatchUpFacts {
  /** The epic head had moved since the branch last took it: the branch took it now. */
  readonly moved: boolean;
}

/**
 * Before the judge. An epic head that did not move: the judge reads the checked commit.
 * One that moved (stories merged meanwhile) was taken into the branch, so everything is
 * checked again on the commit that is now the story, before any judge reads it.
 */
export function decideAfterCatchUp(state: StoryRounds, facts: CatchUpFacts): Decision {
  expecting(state, 'catch-up');
  if (!facts.moved) {
    const open = state.reviewFindings ?? [];
    return {
      state: { ...state, awaiting: { step: 'judge', inPlace: false } },
      effects: [],
      next: { kind: 'judge', inPlace: false, ...(open.length > 0 ? { openReview: open } : {}) },
    };
  }
  return {
    state: { ...state, awaiting: { step: 'check', afterCatchUp: true } },
    effects: [
      say('took the epic head before the judge (stories merged meanwhile): checking again'),
    ],
    next: { kind: 'check' },
  };
}

/** The gates that fail anew, as the coder's feedback shows them. */
function newGateFailures(facts: CheckFacts): NonNullable<PromptFeedback['gateFailures']> {
  return facts.verdicts
    .filter((v) => v.status === 'new')
    .map((v) => ({
      command: v.command,
      lines: v.newLines,
      output: facts.runs.find((r) => r.command === v.command)?.output ?? '',
    }));
}

/**
 * Gates the story passed before it took the epic head fail after: what other stories
 * merged clashes with it. Like a merge that turns the epic head red, this spends a merge
 * revision (the coder gets the red lines), not a fix round, and fails without one.
 */
function redAfterCatchUp(state: StoryRounds, facts: CheckFacts): Decision {
  const used = state.mergeRevisions ?? 0;
  const allowed = state.rules.mergeRevisions ?? 0;
  const blocking = blockingReason(facts);
  if (used >= allowed) {
    return stop(state, 'failed', `gates failed after taking the epic head: ${blocking}`);
  }
  const message = `the gates failed after taking the epic head: merge revision ${used + 1} of ${allowed}`;
  return code(
    { ...state, mergeRevisions: used + 1, blocking },
    {
      gateFailures: newGateFailures(facts),
      oracle: facts.oracle,
    },
    [say(message), { kind: 'note', notes: [message] }],
  );
}

/**
 * After the checks. An interrupt waits (gates it killed prove nothing). No changes:
 * only the judge can find the work in place. New gate failures or oracle findings:
 * a fix round while any is left (with the strays, if not shown yet). Then strays not
 * shown yet: one perimeter round. Forbidden paths refuse the story. Strays shown:
 * put back, and everything checked again on the commit that is now the story.
 */
export function decideAfterCheck(state: StoryRounds, facts: CheckFacts): Decision {
  if (state.awaiting.step === 'recheck') return afterRecheck(state, facts);
  const { afterCatchUp } = expecting(state, 'check');
  if (facts.interrupted) return stop(state, 'waiting', INTERRUPTED);
  if (facts.empty) {
    if (state.rules.taskEnd === true) return taskDone(state, undefined, []);
    if (state.rules.judgeRounds === undefined) return stop(state, 'failed', 'no changes');
    return {
      state: { ...state, awaiting: { step: 'judge', inPlace: true } },
      effects: [],
      next: { kind: 'judge', inPlace: true },
    };
  }
  const failing = facts.verdicts.filter((v) => v.status === 'new');
  const strays = isClean(facts.perimeter) ? [] : describeStrays(facts.perimeter);
  if (failing.length > 0 || facts.oracle.length > 0) {
    if (afterCatchUp === true) return redAfterCatchUp(state, facts);
    if (state.fixRoundsLeft <= 0) {
      return stop(state, 'failed', `gates failed: ${blockingReason(facts)}`, [], 'still-red');
    }
    const feedback: PromptFeedback = {
      gateFailures: newGateFailures(facts),
      oracle: facts.oracle,
      ...(strays.length > 0 && !state.perimeterShown ? { perimeter: strays } : {}),
    };
    return code(
      {
        ...state,
        fixRoundsLeft: state.fixRoundsLeft - 1,
        perimeterShown: state.perimeterShown || strays.length > 0,
        blocking: blockingReason(facts),
      },
      feedback,
      [say(`gates failed: ${describeVerdicts(facts.verdicts, 1) || facts.oracle.join('; ')}`)],
    );
  }
  const effects: StoryEffect[] = [say('gates passed')];
  if (strays.length > 0 && !state.perimeterShown) {
    return code({ ...state, perimeterShown: true }, { perimeter: strays }, [
      ...effects,
      say(`changes outside its perimeter: ${strayPaths(facts.perimeter).join(', ')}`),
    ]);
  }
  if (facts.perimeter.forbidden.length > 0) {
    return stop(
      state,
      'failed',
      `refused: ${facts.perimeter.forbidden.map((f) => `${f.path} (${f.reason})`).join(', ')}`,
      effects,
    );
  }
  if (strays.length > 0) {
    return {
      state: { ...state, checked: facts.commit, awaiting: { step: 'recheck' } },
      effects,
      next: { kind: 'restore', paths: strayPaths(facts.perimeter) },
    };
  }
  return passed(state, facts.commit, effects);
}

/** The checks after restoring: the gates must hold, and the perimeter be clean, without the restored paths. */
function afterRecheck(state: StoryRounds, facts: CheckFacts): Decision {
  if (facts.empty) {
    return stop(state, 'failed', 'no changes (everything it changed was outside its perimeter)');
  }
  const blocking = blockingReason(facts);
  if (blocking !== '') {
    return stop(
      state,
      'failed',
      `gates failed after restoring paths outside the perimeter: ${blocking}`,
    );
  }
  if (!isClean(facts.perimeter)) {
    const left = [...strayPaths(facts.perimeter), ...facts.perimeter.forbidden.map((f) => f.path)];
    return stop(
      state,
      'failed',
      `still outside its perimeter after restoring: ${[...new Set(left)].join(', ')}`,
    );
  }
  return passed(state, facts.commit, []);
}

/** The merged epic head failed its gates with the story's checked commit; the merge was undone. */
interface RedMergeFacts {
  /** The gates' new failures on the merged tree. */
  readonly failures: PromptFeedback['gateFailures'] & object;
  /** The story's failure when no revision is left (`epic gates failed after merging; …`). */
  readonly reason: string;
}

/**
 * A story whose merge turned the epic head red goes back to its coder with the new red
 * lines, on its branch caught up with the epic head, while `mergeRevisions` last; then
 * it fails as before.
 */
export function decideAfterRedMerge(state: StoryRounds, facts: RedMergeFacts): Decision {
  const used = state.mergeRevisions ?? 0;
  const allowed = state.rules.mergeRevisions ?? 0;
  if (used >= allowed) return stop(state, 'failed', facts.reason);
  const message = `the merged epic head failed its gates (merge undone): merge revision ${used + 1} of ${allowed}, on the epic head`;
  return code({ ...state, mergeRevisions: used + 1 }, { gateFailures: facts.failures }, [
    say(message),
    { kind: 'note', notes: [message] },
  ]);
}
