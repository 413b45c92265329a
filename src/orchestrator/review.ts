/**
 * Review rounds on GitHub: the comments of the epic's pull request as the core's
 * `review` trigger takes them (every item listed, each author's permission looked
 * up once, bots and people without write permission marked as such so the core
 * leaves them out), and the answers to them.
 */
import type { GitHubRepo, ListedReviewItem } from '../adapters/github/index.js';
import type { Trigger } from '../core/epic/index.js';
import { decideSender, isBot, parseCommand } from '../core/epic/index.js';
import type { ReviewAnswer, ReviewComment } from '../core/epic/review.js';

/** The pull request's comments as the core reads them; `listed` is the raw listing. */
async function reviewComments(
  repo: GitHubRepo,
  pr: number,
): Promise<{ comments: ReviewComment[]; listed: ListedReviewItem[] }> {
  const listed = await repo.listReviewItems(pr);
  const writers = new Map<string, boolean>();
  const comments: ReviewComment[] = [];
  for (const item of listed) {
    // A thread's replies (ours among them) and commands are not review comments.
    if (item.reply || repo.isOurs(item.author)) continue;
    if (item.kind === 'comment' && parseCommand(item.body) !== null) continue;
    let writer = writers.get(item.author);
    if (writer === undefined) {
      // Bots are never asked about: no request, never a writer.
      writer =
        !isBot(item.authorType, item.author, repo.botLogin) &&
        decideSender({
          senderType: item.authorType,
          login: item.author,
          botLogin: repo.botLogin,
          permission: await repo.permissionOf(item.author),
        }) === 'act';
      writers.set(item.author, writer);
    }
    comments.push({
      kind: item.kind,
      id: item.id,
      ...(item.path === undefined ? {} : { path: item.path }),
      ...(item.kind === 'line' ? { line: item.line ?? null } : {}),
      ...(item.side === undefined ? {} : { side: item.side }),
      body: item.body,
      author: item.author,
      writer,
    });
  }
  return { comments, listed };
}

/** The `review` trigger for the pull request's comments. */
export async function reviewTrigger(
  repo: GitHubRepo,
  pr: number,
  by: string,
): Promise<Extract<Trigger, { kind: 'review' }>> {
  const { comments } = await reviewComments(repo, pr);
  return { kind: 'review', by, comments };
}

/** Answers review comments on the pull request, each once (listed at most once per decision). */
export class ReviewAnswers {
  private listing: Promise<ListedReviewItem[]> | undefined;

  constructor(
    private readonly repo: GitHubRepo,
    private readonly pr: number,
  ) {}

  async answer(answer: ReviewAnswer): Promise<void> {
    this.listing ??= this.repo.listReviewItems(this.pr);
    await this.repo.ensureReviewAnswer(this.pr, answer, await this.listing);
  }
}
