/**
 * Reviews of the epic's pull request: its reviews, its review comments (on lines of
 * files) and its conversation, listed for a review round; epicflow's answers, one
 * per comment, found again by their marker and author (an ensure: a redelivered
 * event or a decision made again answers nothing twice).
 */
import type { ReviewAnswer } from '../../../core/epic/review.js';
import { hasMarker, withMarkers } from '../../../core/epic/markers.js';
import { reviewAnswerMarker } from '../../../core/epic/review.js';
import { attempt } from '../errors.js';
import { Resource } from './resource.js';

/** One item of a pull request as listed, before anyone decided what it means. */
export interface ListedReviewItem {
  readonly kind: 'line' | 'review' | 'comment';
  readonly id: number;
  readonly path?: string;
  readonly line?: number | null;
  readonly side?: 'LEFT' | 'RIGHT';
  readonly body: string;
  readonly author: string;
  readonly authorType: string;
  /** A review comment answering another one (a thread's reply): never a comment of its own. */
  readonly reply: boolean;
  /** A review's state (`CHANGES_REQUESTED`, `COMMENTED`, …). */
  readonly state?: string;
}

const PERMISSION = 'Pull requests: read and write';

export class Reviews extends Resource {
  /** Every review, review comment and conversation comment of the pull request. */
  async listReviewItems(pr: number): Promise<ListedReviewItem[]> {
    const where = `${this.fullName}#${pr}`;
    const [comments, reviews, conversation] = await Promise.all([
      attempt(`list the review comments of ${where}`, PERMISSION, () =>
        this.octokit.paginate(this.octokit.rest.pulls.listReviewComments, {
          ...this.base,
          pull_number: pr,
          per_page: 100,
        }),
      ),
      attempt(`list the reviews of ${where}`, PERMISSION, () =>
        this.octokit.paginate(this.octokit.rest.pulls.listReviews, {
          ...this.base,
          pull_number: pr,
          per_page: 100,
        }),
      ),
      attempt(`list the comments of ${where}`, 'Issues: read and write', () =>
        this.octokit.paginate(this.octokit.rest.issues.listComments, {
          ...this.base,
          issue_number: pr,
          per_page: 100,
        }),
      ),
    ]);
    const items: ListedReviewItem[] = [];
    for (const c of comments) {
      items.push({
        kind: 'line',
        id: c.id,
        path: c.path,
        line: c.line ?? null,
        ...(c.side === undefined ? {} : { side: c.side }),
        body: c.body,
        author: c.user.login,
        authorType: c.user.type,
        reply: c.in_reply_to_id !== undefined,
      });
    }
    for (const r of reviews) {
      if ((r.body ?? '').trim() === '') continue;
      items.push({
        kind: 'review',
        id: r.id,
        body: r.body,
        author: r.user?.login ?? '',
        authorType: r.user?.type ?? 'User',
        reply: false,
        state: r.state,
      });
    }
    for (const c of conversation) {
      items.push({
        kind: 'comment',
        id: c.id,
        body: c.body ?? '',
        author: c.user?.login ?? '',
        authorType: c.user?.type ?? 'User',
        reply: false,
      });
    }
    return items;
  }

  /**
   * The answer to one comment, unless one of ours carries its marker already: in the
   * comment's thread for a comment on a line, in the conversation otherwise.
   */
  async ensureReviewAnswer(
    pr: number,
    answer: ReviewAnswer,
    listed: readonly ListedReviewItem[],
  ): Promise<'created' | 'unchanged'> {
    const marker = reviewAnswerMarker(answer.key);
    const inThread = answer.kind === 'line';
    const done = listed.some(
      (i) =>
        this.isOurs(i.author) &&
        (inThread ? i.kind === 'line' : i.kind === 'comment') &&
        hasMarker(i.body, marker),
    );
    if (done) return 'unchanged';
    const body = withMarkers(answer.body, [marker]);
    if (inThread) {
      await attempt(
        `answer review comment ${answer.id} of ${this.fullName}#${pr}`,
        PERMISSION,
        () =>
          this.octokit.rest.pulls.createReplyForReviewComment({
            ...this.base,
            pull_number: pr,
            comment_id: answer.id,
            body,
          }),
      );
    } else {
      await attempt(`comment on ${this.fullName}#${pr}`, 'Issues: read and write', () =>
        this.octokit.rest.issues.createComment({ ...this.base, issue_number: pr, body }),
      );
    }
    return 'created';
  }
}
