/**
 * The review round's part of the one epic state machine (`decideStories`): whether a
 * `review` trigger starts a round, is queued behind a running one or finds nothing
 * new; which stories run again (their records revised, their merge no longer counting
 * as done until a newer one lands); and, once every story of the round is done or
 * failed, the answers to its comments.
 */
import { code } from '../report/escape.js';
import type { Plan, StoryRecord } from '../model.js';
import {
  notTakenAnswers,
  planReviewRound,
  revisedRecord,
  roundAnswers,
  roundApplied,
  roundOver,
  startedReviewDoc,
  supersededMerge,
  withReviewStories,
  type ReviewDoc,
  type ReviewRound,
} from './review.js';
import type { Entry } from './story-state.js';
import { epicIdOf, login, newRecord, statusOf } from './story-state.js';
import type { Action, ReconcileInput } from './types.js';

interface ReviewStart {
  /** The review part of the epic document after this decision. */
  readonly doc: ReviewDoc | undefined;
  /** The plan with every round's `review-<n>` story. */
  readonly plan: Plan;
  /** The round this decision starts. */
  readonly round?: ReviewRound;
  readonly actions: readonly Action[];
  readonly replies: readonly string[];
}

/** Whether a story counts as done before the decision: merged (by a merge no revision replaces) or skipped. */
function doneBefore(input: ReconcileInput, id: string): boolean {
  const record = input.records[id];
  const merge = input.merged.get(id);
  if (merge !== undefined && !supersededMerge(record, merge)) return true;
  // Skipped (or found already in place): done without a merge of its own.
  return record?.status === 'done' && record.mergeCommit === undefined;
}

/** The trigger's side: a round started, queued, or nothing new; the plan it runs. */
export function reviewStart(input: ReconcileInput): ReviewStart {
  const doc = input.review;
  const { trigger } = input;
  if (trigger.kind !== 'review') {
    return { doc, plan: withReviewStories(input.plan, doc), actions: [], replies: [] };
  }
  const current = withReviewStories(input.plan, doc);
  const busy = current.stories.filter((s) => !doneBefore(input, s.id)).map((s) => s.id);
  // A round whose records are not written yet is made again below, not waited for.
  if (busy.length > 0 && roundApplied(doc, input.records)) {
    const queued: ReviewDoc = {
      ...(doc ?? { round: 0, taken: [], roundKeys: [], stories: [], extra: [] }),
      queued: true,
      queuedBy: login(trigger.by),
    };
    const shown = busy.slice(0, 5).map(code).join(', ');
    return {
      doc: queued,
      plan: current,
      actions: [{ kind: 'set-review', review: queued }],
      replies: [
        `Review round queued by @${login(trigger.by)}: it starts once ${shown}${busy.length > 5 ? ', …' : ''} ${busy.length === 1 ? 'is' : 'are'} done.`,
      ],
    };
  }
  const round = planReviewRound({
    plan: input.plan,
    config: input.config,
    configPaths: input.configPaths ?? [],
    doc,
    records: input.records,
    comments: trigger.comments,
  });
  if (round === null) {
    const cleared: ReviewDoc | undefined = doc?.queued === true ? withoutQueue(doc) : undefined;
    return {
      doc: cleared ?? doc,
      plan: current,
      actions: cleared === undefined ? [] : [{ kind: 'set-review', review: cleared }],
      replies: [
        'No new review comments from people with write permission: no review round started.',
      ],
    };
  }
  const next = startedReviewDoc(round);
  const actions: Action[] = [];
  // The last round ended (its stories merged) but no decision answered it yet: now.
  if (doc !== undefined && doc.answered !== true && roundApplied(doc, input.records)) {
    for (const answer of roundAnswers(doc, input.records, input.merged)) {
      actions.push({ kind: 'answer-review', answer });
    }
  }
  actions.push({ kind: 'set-review', review: next });
  if (round.byStory.size > 0 && input.pr?.draft === false) actions.push({ kind: 'mark-pr-draft' });
  for (const answer of notTakenAnswers(round)) actions.push({ kind: 'answer-review', answer });
  const runs = [...round.byStory.entries()].map(
    ([story, comments]) => `${code(story)} (${comments.length})`,
  );
  const person = round.notTaken.length;
  return {
    doc: next,
    plan: withReviewStories(input.plan, next),
    round,
    actions,
    replies: [
      `Review round ${round.round} started by @${login(trigger.by)}: ` +
        (runs.length > 0
          ? `running ${runs.join(', ')} again from the epic head`
          : 'no story runs') +
        (person > 0
          ? `; ${person} comment${person === 1 ? '' : 's'} need${person === 1 ? 's' : ''} a person`
          : '') +
        (round.leftOver > 0
          ? `; ${round.leftOver} more comment${round.leftOver === 1 ? '' : 's'} wait for the next round (\`/revise\` once this one is done)`
          : '') +
        '.',
    ],
  };
}

/** The stories of a round: a new attempt from the epic head, the comments in their record. */
export function applyReviewRound(
  input: ReconcileInput,
  entries: readonly Entry[],
  round: ReviewRound,
): void {
  for (const [story, comments] of round.byStory) {
    const e = entries.find((x) => x.story.id === story);
    if (e === undefined) continue;
    const cur = e.current ?? newRecord(epicIdOf(input), e);
    e.current = revisedRecord(cur, round.round, comments, e.mergeCommit);
    e.mergeCommit = undefined;
    delete e.derivedFailure;
  }
}

/** Once the latest round is over: its answers, once, and a queued round's start. */
export function reviewEnd(
  input: ReconcileInput,
  entries: readonly Entry[],
  doc: ReviewDoc | undefined,
): Action[] {
  if (doc === undefined || doc.round === 0) return queuedStart(input, entries, doc);
  const records: Record<string, StoryRecord> = {};
  for (const e of entries) if (e.current !== undefined) records[e.story.id] = e.current;
  if (doc.answered === true || !roundApplied(doc, records)) {
    return queuedStart(input, entries, doc);
  }
  const status = new Map(entries.map((e) => [e.story.id, statusOf(e)]));
  if (!roundOver(doc, (s) => status.get(s))) return [];
  const answered: ReviewDoc = { ...doc, answered: true };
  const actions: Action[] = roundAnswers(doc, records, input.merged).map((answer) => ({
    kind: 'answer-review' as const,
    answer,
  }));
  actions.push({ kind: 'set-review', review: answered });
  actions.push(...queuedStart(input, entries, answered));
  return actions;
}

/** A queued round starts once every story is done (the orchestrator lists the comments). */
function queuedStart(
  input: ReconcileInput,
  entries: readonly Entry[],
  doc: ReviewDoc | undefined,
): Action[] {
  if (doc?.queued !== true || input.trigger.kind === 'review') return [];
  if (!entries.every((e) => statusOf(e) === 'done')) return [];
  return [{ kind: 'start-queued-review', by: doc.queuedBy ?? 'epicflow' }];
}

function withoutQueue(doc: ReviewDoc): ReviewDoc {
  const { queued: _q, queuedBy: _b, ...rest } = doc;
  return rest;
}
