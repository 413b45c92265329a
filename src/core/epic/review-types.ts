/**
 * The shapes of review rounds that the epic's types name (the review part of the epic
 * document, a comment, an answer), apart from the rules of review.ts, which need the
 * epic's types in turn.
 */

/** Where a comment was made: a line of a file, a review's own text, or the conversation. */
export type ReviewCommentKind = 'line' | 'review' | 'comment';

/** One comment on the epic's pull request, as the orchestrator listed it. */
export interface ReviewComment {
  readonly kind: ReviewCommentKind;
  /** GitHub's id of the review comment, the review, or the issue comment. */
  readonly id: number;
  /** The file a `line` comment is on (repository-relative). */
  readonly path?: string;
  /** The line it is on; null when the line is no longer in the diff (an outdated comment). */
  readonly line?: number | null;
  /** Which side of the diff: `LEFT` is the old version (a removed line, a deleted file). */
  readonly side?: 'LEFT' | 'RIGHT';
  readonly body: string;
  readonly author: string;
  /** A person with write permission (bots and readers are never quoted into prompts). */
  readonly writer: boolean;
}

/** The `review-<n>` story of a round, as the epic document keeps it. */
export interface ReviewStorySpec {
  readonly id: string;
  readonly owns: readonly string[];
  readonly dependsOn: readonly string[];
}

/** The review part of the epic document. */
export interface ReviewDoc {
  /** The latest round. */
  readonly round: number;
  /** Keys of every comment a round took (or answered as not taken). */
  readonly taken: readonly string[];
  /** Keys of the comments the latest round took. */
  readonly roundKeys: readonly string[];
  /** The stories the latest round runs again (its `review-<n>` story included). */
  readonly stories: readonly string[];
  /** Every round's `review-<n>` story, oldest first: they stay in the plan. */
  readonly extra: readonly ReviewStorySpec[];
  /** A `/revise` or a review came while the round ran: the next round starts when it ends. */
  readonly queued?: boolean;
  /** Who asked for the queued round. */
  readonly queuedBy?: string;
  /** The latest round's comments were answered. */
  readonly answered?: boolean;
}

/** One answer to a review comment. */
export interface ReviewAnswer {
  readonly key: string;
  readonly kind: ReviewCommentKind;
  readonly id: number;
  /** The answer's text (the adapter adds its marker, `reviewAnswerMarker(key)`). */
  readonly body: string;
}
