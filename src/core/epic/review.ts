/**
 * Review rounds on the epic's pull request (docs/commands.md, "Review rounds"): a
 * review that requests changes, or `/revise` after review comments, sends each new
 * comment of a person with write permission to the story whose `owns` covers its
 * path; that story runs again from the epic head with the comments in its prompt.
 * Comments on paths no story owns, and comments on the pull request as a whole, go
 * to one `review-<n>` story of the round; comments on protected paths (workflows,
 * the configuration) need a person. Everything here is pure: the orchestrator lists
 * the comments, `decideStories` applies the round (one state machine), and the
 * answers are rendered here and written by the orchestrator.
 */
import { supersededByFollowUp } from './deferred.js';
import type { EpicflowConfig } from '../config/types.js';
import { isProtectedPath, isWithin, normalisePath } from '../paths.js';
import type { Plan, Revision, RevisionComment, Story, StoryRecord } from '../model.js';
import { buildPlan } from '../plan/validate.js';
import { code } from '../report/escape.js';
import { neutralizeMentions, sanitizeIssueText } from './sanitize.js';
import type {
  ReviewAnswer,
  ReviewComment,
  ReviewCommentKind,
  ReviewDoc,
  ReviewStorySpec,
} from './review-types.js';

export type { ReviewAnswer, ReviewComment, ReviewDoc, ReviewStorySpec };

/** The stable key of a comment in the epic document (`line:12`, `review:7`, `comment:3`). */
function commentKey(c: Pick<ReviewComment, 'kind' | 'id'>): string {
  return `${c.kind}:${c.id}`;
}

/** Most comments one story takes in one round. */
export const REVISION_COMMENTS_MAX = 30;

/** Longest comment text carried into a record (and so a prompt). */
const REVISION_COMMENT_MAX = 4000;

export type { RevisionComment };

export interface RoutedComment {
  readonly comment: ReviewComment;
  /** The story it goes to; undefined when it goes nowhere (see `why`). */
  readonly story?: string;
  /** Why it is not taken into the round. */
  readonly why?: string;
}

export interface ReviewRound {
  readonly round: number;
  /** Story id → the comments it runs again for (the `review-<n>` story included). */
  readonly byStory: ReadonlyMap<string, readonly RevisionComment[]>;
  /** The round's `review-<n>` story, when some comment needs one. */
  readonly extra?: ReviewStorySpec;
  /** Comments of people with write permission that no story can take: answered at once. */
  readonly notTaken: readonly RoutedComment[];
  /** Keys of every comment this round dealt with. */
  readonly keys: readonly string[];
  /** Comments over `REVISION_COMMENTS_MAX` for one story: left for the next round. */
  readonly leftOver: number;
  /** The document the round builds on. */
  readonly base: ReviewDoc | undefined;
}

/** The `review-<n>` story id of round `n`. */
function reviewStoryId(round: number): string {
  return `review-${round}`;
}

/** A comment's text as a record carries it: cleaned and capped, still data. */
function revisionComment(c: ReviewComment): RevisionComment {
  const text = sanitizeIssueText(c.body).trim();
  const body =
    text.length > REVISION_COMMENT_MAX
      ? `${text.slice(0, REVISION_COMMENT_MAX)}\n[… ${text.length - REVISION_COMMENT_MAX} characters cut]`
      : text;
  return {
    key: commentKey(c),
    ...(c.path === undefined ? {} : { path: normalisePath(c.path) }),
    ...(c.kind === 'line' ? { line: c.line ?? null } : {}),
    ...(c.kind === 'line' && c.side === 'LEFT' ? { removed: true as const } : {}),
    author: c.author,
    body,
  };
}

/** The story whose `owns` covers the path (the first in plan order). */
function ownerOf(plan: Plan, path: string): string | undefined {
  const p = normalisePath(path);
  return plan.stories.find((s) => s.owns.some((o) => isWithin(p, normalisePath(o))))?.id;
}

/**
 * Routes the comments no earlier round took: each comment of a person with write
 * permission on a file goes to the story owning it; on a protected path it needs a
 * person; every other one (an unowned path, the pull request as a whole) goes to the
 * round's `review-<n>` story. Comments of bots and of people without write permission
 * are left out entirely (never quoted, never answered). Null when no comment is new.
 */
export function planReviewRound(input: {
  readonly plan: Plan;
  readonly config: Pick<EpicflowConfig, 'allowWorkflowChanges'>;
  readonly configPaths: readonly string[];
  readonly doc: ReviewDoc | undefined;
  readonly records: Readonly<Record<string, StoryRecord>>;
  readonly comments: readonly ReviewComment[];
}): ReviewRound | null {
  // A round written to the epic document whose records were not (the decision was
  // interrupted, or decided again): it is made again, with the same number.
  const doc = roundApplied(input.doc, input.records) ? input.doc : undoneRound(input.doc);
  const taken = new Set(doc?.taken ?? []);
  const fresh = input.comments.filter((c) => c.writer && !taken.has(commentKey(c)));
  if (fresh.length === 0) return null;
  const round = (doc?.round ?? 0) + 1;
  const extraId = reviewStoryId(round);
  const byStory = new Map<string, RevisionComment[]>();
  const notTaken: RoutedComment[] = [];
  const unowned: string[] = [];
  let wholePr = false;
  const left: string[] = [];
  const add = (story: string, c: ReviewComment): void => {
    const list = byStory.get(story) ?? [];
    // A record (and a prompt) holds a bounded number: the rest waits for the next round.
    if (list.length >= REVISION_COMMENTS_MAX) {
      left.push(commentKey(c));
      return;
    }
    list.push(revisionComment(c));
    byStory.set(story, list);
  };
  const extraPending: ReviewComment[] = [];
  for (const c of fresh) {
    if (c.kind !== 'line' || c.path === undefined) {
      wholePr = true;
      extraPending.push(c);
      continue;
    }
    const path = normalisePath(c.path);
    if (!input.config.allowWorkflowChanges && isProtectedPath(path, input.configPaths)) {
      notTaken.push({
        comment: c,
        why: `${code(path)} is protected (files under .github/ and epicflow's configuration): no story may change it, so a person has to`,
      });
      continue;
    }
    const owner = ownerOf(input.plan, path);
    if (owner !== undefined) {
      add(owner, c);
      continue;
    }
    if (!unowned.includes(path)) unowned.push(path);
    extraPending.push(c);
  }
  let extra: ReviewStorySpec | undefined;
  if (extraPending.length > 0) {
    // A comment on the pull request as a whole may concern any story's paths: the
    // round's story then owns them all, and runs after the stories it revises.
    const owns = wholePr
      ? [...new Set([...input.plan.stories.flatMap((s) => s.owns.map(normalisePath)), ...unowned])]
      : unowned;
    extra = { id: extraId, owns, dependsOn: [...byStory.keys()] };
    for (const c of extraPending) add(extraId, c);
  }
  return {
    round,
    byStory,
    ...(extra === undefined ? {} : { extra }),
    notTaken,
    keys: fresh.map(commentKey).filter((k) => !left.includes(k)),
    leftOver: left.length,
    base: doc,
  };
}

/** Whether every story of the latest round carries it in its record. */
export function roundApplied(
  doc: ReviewDoc | undefined,
  records: Readonly<Record<string, StoryRecord>>,
): boolean {
  if (doc === undefined) return true;
  return doc.stories.every((s) => records[s]?.revision?.round === doc.round);
}

/** The document as it was before its latest round. */
function undoneRound(doc: ReviewDoc | undefined): ReviewDoc | undefined {
  if (doc === undefined || doc.round <= 1) return undefined;
  const keys = new Set(doc.roundKeys);
  return {
    round: doc.round - 1,
    taken: doc.taken.filter((k) => !keys.has(k)),
    roundKeys: [],
    stories: [],
    extra: doc.extra.filter((s) => s.id !== reviewStoryId(doc.round)),
  };
}

/** The epic document's review part once the round started. */
export function startedReviewDoc(r: ReviewRound): ReviewDoc {
  const doc = r.base;
  return {
    round: r.round,
    taken: [...(doc?.taken ?? []), ...r.keys],
    roundKeys: r.keys,
    stories: [...r.byStory.keys()],
    extra: [...(doc?.extra ?? []), ...(r.extra === undefined ? [] : [r.extra])],
  };
}

/** The story a `review-<n>` spec stands for in the plan. */
function reviewStory(spec: ReviewStorySpec, round: number): Story {
  return {
    id: spec.id,
    title: `Review round ${round}`,
    description:
      'Address the review comments on the epic pull request quoted in the "Review comments" section.',
    owns: spec.owns,
    reads: [],
    dependsOn: spec.dependsOn,
    provides: [],
    acceptance: ['every quoted review comment is addressed within the owned paths'],
    testsChange: false,
  };
}

/** The plan with every round's `review-<n>` story after the plan's own (ids the plan already has are skipped). */
export function withReviewStories(plan: Plan, doc: ReviewDoc | undefined): Plan {
  const extra = doc?.extra ?? [];
  if (extra.length === 0) return plan;
  const known = new Set(plan.stories.map((s) => s.id));
  const added = extra
    .filter((s) => !known.has(s.id))
    .map((s) => reviewStory(s, Number(s.id.slice('review-'.length))));
  if (added.length === 0) return plan;
  return buildPlan([...plan.stories, ...added]);
}

/**
 * Whether the story's merge on the epic branch is the one a running revision replaces (a
 * review round's, or a follow-up round's over deferred findings).
 */
export function supersededMerge(
  record: StoryRecord | undefined,
  merge: string | undefined,
): boolean {
  return (
    merge !== undefined &&
    (record?.revision?.supersedes === merge || supersededByFollowUp(record, merge))
  );
}

/**
 * Whether the latest round is over: each of its stories is done (merged again) or
 * failed. `status` is the story's effective status in this decision.
 */
export function roundOver(
  doc: ReviewDoc | undefined,
  status: (story: string) => string | undefined,
): boolean {
  if (doc === undefined) return false;
  return doc.stories.every((s) => {
    const st = status(s);
    return st === 'done' || st === 'failed';
  });
}

/** The marker of the answer to one review comment. */
export function reviewAnswerMarker(key: string): string {
  return `review-answer:${key.replace(':', '=')}`;
}

function answer(kind: ReviewCommentKind, id: number, text: string): ReviewAnswer {
  const key = commentKey({ kind, id });
  return { key, kind, id, body: text };
}

/** Quote of a comment for an answer that is not in its thread. */
function quoted(c: { readonly author: string; readonly body: string }): string {
  const first = neutralizeMentions(sanitizeIssueText(c.body)).split('\n')[0] ?? '';
  const line = first.length > 200 ? `${first.slice(0, 200)}…` : first;
  return `> ${line}\n\n(@${c.author.replace(/[^A-Za-z0-9-]/g, '')}) `;
}

/** The answers to comments no story takes, given when the round starts. */
export function notTakenAnswers(round: ReviewRound): ReviewAnswer[] {
  return round.notTaken.map(({ comment: c, why }) =>
    answer(
      c.kind,
      c.id,
      `${c.kind === 'line' ? '' : quoted(c)}epicflow did not take this into review round ${round.round}: ${why ?? 'it needs a person'}.`,
    ),
  );
}

/**
 * The answers once the round is over: each comment names the story that ran for it
 * and the merge that addressed it, or why it did not.
 */
export function roundAnswers(
  doc: ReviewDoc,
  records: Readonly<Record<string, StoryRecord>>,
  merged: ReadonlyMap<string, string>,
): ReviewAnswer[] {
  const out: ReviewAnswer[] = [];
  for (const story of doc.stories) {
    const record = records[story];
    const revision = record?.revision;
    if (record === undefined || revision === undefined || revision.round !== doc.round) continue;
    const merge = merged.get(story);
    const addressed =
      record.status === 'done' && merge !== undefined && merge !== revision.supersedes;
    for (const c of revision.comments) {
      const [kind, id] = c.key.split(':') as [ReviewCommentKind, string];
      const lead = kind === 'line' ? '' : quoted(c);
      const nothing = record.status === 'done' && !addressed;
      const text = addressed
        ? `${lead}Addressed by story ${code(story)} in merge ${merge.slice(0, 7)} (review round ${doc.round}).`
        : nothing
          ? `${lead}Story ${code(story)} ran again for this in review round ${doc.round} and changed nothing (the judge found it already in place, or it was skipped).`
          : `${lead}Story ${code(story)} did not address this in review round ${doc.round}: ${neutralizeMentions(sanitizeIssueText(record.reason ?? record.status))}. Comment \`/retry ${story}\` on the epic issue to run it again.`;
      out.push(answer(kind, Number(id), text));
    }
  }
  return out;
}

/** A story's record as it runs again for a round: a new attempt from the epic head. */
export function revisedRecord(
  record: StoryRecord,
  round: number,
  comments: readonly RevisionComment[],
  supersedes: string | undefined,
): StoryRecord {
  // A follow-up round over deferred findings is over for a story a review round runs again.
  const {
    reason: _r,
    mergeCommit: _m,
    finishedAt: _f,
    storyCommit: _c,
    deferred: _d,
    deferredRound: _dr,
    ...rest
  } = record;
  return {
    ...rest,
    status: 'planned',
    restart: 'fresh',
    revision: { round, ...(supersedes === undefined ? {} : { supersedes }), comments },
  };
}

/** The note every report shows for a story a review round ran again. */
export function revisionNote(revision: Revision): string {
  const n = revision.comments.length;
  return `review round ${revision.round}: ${n} comment${n === 1 ? '' : 's'}`;
}
