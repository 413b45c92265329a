/**
 * A review round of a story: one reviewer turn per lens of `review.lenses`, in order, on
 * the checked commit (a fresh checkout of it per turn: a reviewer only reads), each on an executor of
 * the review role the roster picks away from the story's coders when another can serve.
 * A lens whose answer the record keeps for the same diff, lens and prompt (`reviewed`,
 * sealed as the judge's verdict is) is not asked again: its answer is reused, and said so.
 * What follows the round is core/story's decision (`decideAfterReview`).
 */
import { helperFingerprint, reusableAnswer } from '../../core/judge/index.js';
import { buildReviewPrompt, reviewAnswerSchema } from '../../core/review/index.js';
import type { LensFacts, ReviewFacts } from '../../core/story/index.js';
import { askHelper, keep, type FingerprintOf } from './helper-calls.js';
import type { TurnScope } from './turns.js';

export async function reviewStory(
  scope: TurnScope,
  story: { readonly coders: readonly string[]; readonly transientRetries: number },
  base: string,
  action: { readonly round: number; readonly previous: readonly string[] },
): Promise<ReviewFacts> {
  const { ctx, tree, rec } = scope;
  const review = ctx.config.review;
  if (review === undefined) return { kind: 'unavailable', why: 'no review is configured' };
  const head = await tree.head();
  const diff = await ctx.ports.git.diff(base, head);
  let transientRetries = story.transientRetries;
  const lenses: LensFacts[] = [];
  for (const lens of review.lenses) {
    const prefix = `${lens.name}: `;
    const previous = action.previous
      .filter((f) => f.startsWith(prefix))
      .map((f) => f.slice(prefix.length));
    const prompt = (round: number, earlier: readonly string[], repairError?: string): string =>
      buildReviewPrompt({
        epic: ctx.settings.epic,
        story: scope.story,
        lens,
        diff,
        houseRules: ctx.settings.houseRules,
        round,
        previous: earlier,
        repairError,
      });
    // What the lens reads: the diff through its instruction, in the prompt of a first round
    // (a later round's number and the lens's earlier findings do not change its answer).
    const fingerprintOf: FingerprintOf = (executor) =>
      helperFingerprint({ role: 'reviewer', prompt: prompt(1, []), subject: diff, executor });
    const pick = ctx.roster.helper(review.role, undefined, story.coders);
    const kept =
      pick === null
        ? undefined
        : reusableAnswer(
            ctx.settings.answerKey,
            rec.record.reviewed?.[lens.name],
            fingerprintOf(pick.executor),
            true,
          );
    if (pick !== null && kept !== undefined) {
      lenses.push({
        lens: lens.name,
        executor: kept.executor,
        score: kept.answer.score,
        cleared: kept.answer.cleared,
        findings: kept.answer.findings,
        independent: pick.independent,
        reused: true,
      });
      continue;
    }
    const result = await askHelper(scope, story.coders, transientRetries, {
      role: review.role,
      head,
      schema: reviewAnswerSchema,
      doing: `reviewing (${lens.name})`,
      prompt: (repairError) => prompt(action.round, previous, repairError),
      evaluator: {
        attributes: {
          'epicflow.evaluator.kind': 'review',
          'openinference.span.kind': 'EVALUATOR',
          'epicflow.review.lens': lens.name,
          'epicflow.review.round': action.round,
        },
        scores: (a) => ({
          'epicflow.review.cleared': a.cleared,
          'epicflow.review.score': a.score,
          'epicflow.review.findings': a.findings.length,
        }),
      },
    });
    transientRetries = result.transientRetries;
    const { answer } = result;
    if (typeof answer === 'string') {
      return { kind: 'unavailable', why: `${lens.name} lens: ${answer}`, transientRetries };
    }
    const reviewed = keep(ctx, answer, fingerprintOf);
    if (reviewed !== undefined) {
      await rec.save({ reviewed: { ...rec.record.reviewed, [lens.name]: reviewed } });
    }
    lenses.push({
      lens: lens.name,
      executor: answer.executor,
      score: answer.value.score,
      cleared: answer.value.cleared,
      findings: answer.value.findings,
      independent: answer.independent,
    });
  }
  return { kind: 'round', lenses, transientRetries };
}
