/**
 * The decision on a review round: the lenses of `review.lenses` read the checked commit,
 * each through its own reviewer turn. All cleared: on to the judge (or the merge). Findings:
 * a coder round with them while `review.rounds` last; after that they stay open and go on to
 * the judge, which gives the final verdict (without a judge, the story merges with them
 * noted). A review that cannot be had fails the story, as a judge that cannot be had does.
 */
import type { EvaluationRound } from '../model.js';
import { plural } from './texts.js';
import type { Decision, LensFacts, ReviewFacts, StoryRounds } from './rounds.js';
import { reusedLensesNote } from '../judge/reuse.js';
import {
  code,
  expecting,
  reusedEffects,
  say,
  stop,
  toJudgeOrMerge,
  withHelperRetries,
} from './decision-kit.js';

/** A lens's findings as the coder, the judge and the log read them: `tests: …`. */
function lensFindings(lens: LensFacts): string[] {
  const given = lens.findings.map((f) => f.trim()).filter((f) => f !== '');
  // A lens that did not clear but named nothing still gives the coder a reason.
  const texts =
    given.length > 0 || lens.cleared
      ? given
      : [`scored ${lens.score}/2 and named no finding: look again through this lens`];
  return texts.map((t) => `${lens.lens}: ${t}`);
}

export function decideAfterReview(before: StoryRounds, facts: ReviewFacts): Decision {
  expecting(before, 'review');
  const state = withHelperRetries(before, facts);
  if (facts.kind === 'unavailable')
    return stop(state, 'failed', `review unavailable: ${facts.why}`);
  const round = (state.reviews ?? 0) + 1;
  const findings = facts.lenses.flatMap(lensFindings);
  const cleared = findings.length === 0;
  const fixes = state.reviewFixes ?? 0;
  const allowed = state.rules.reviewRounds ?? 0;
  const fixing = !cleared && fixes < allowed;
  const scores = Object.fromEntries(facts.lenses.map((l) => [l.lens, l.score]));
  const executors = [...new Set(facts.lenses.map((l) => l.executor))];
  const evaluation: EvaluationRound = {
    kind: 'review',
    round,
    commit: state.checked,
    cleared,
    findings,
    scores,
    executors,
    outcome: cleared ? 'passed' : fixing ? 'fixing' : 'open',
  };
  const scoreText = facts.lenses.map((l) => `${l.lens} ${l.score}/2`).join(', ');
  const told = say(
    `review round ${round}: ${cleared ? 'cleared' : plural(findings.length, 'finding')} (${scoreText})` +
      (cleared ? '' : `: ${findings.join('; ')}`),
    { evaluation: 'review', round, cleared, findings: findings.length, scores, executors },
  );
  const reusedLenses = facts.lenses.filter((l) => l.reused === true).map((l) => l.lens);
  const reused =
    reusedLenses.length === 0 ? [] : reusedEffects(reusedLensesNote(round, reusedLenses));
  const notIndependent = facts.lenses
    .filter((l) => !l.independent)
    .map((l) => `reviewer of ${l.lens} was not independent: ${l.executor} also coded the story`);
  const effects = [
    ...reused,
    told,
    { kind: 'evaluation', evaluation } as const,
    ...(notIndependent.length > 0 ? [{ kind: 'note', notes: notIndependent } as const] : []),
  ];
  const next: StoryRounds = { ...state, reviews: round, reviewFindings: cleared ? [] : findings };
  if (cleared) {
    const note =
      `review cleared in round ${round}` +
      (fixes > 0 ? ` after ${plural(fixes, 'fix round')}` : '') +
      ` (${scoreText})`;
    return toJudgeOrMerge(next, [...effects, { kind: 'note', notes: [note] }]);
  }
  if (fixing) return code({ ...next, reviewFixes: fixes + 1 }, { review: { findings } }, effects);
  const open = `review left ${plural(findings.length, 'finding')} open after ${plural(fixes, 'fix round')}: ${findings.join('; ')}`;
  return toJudgeOrMerge(next, [...effects, { kind: 'note', notes: [open] }]);
}
