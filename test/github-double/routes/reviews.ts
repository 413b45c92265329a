/**
 * Pull request reviews and review comments, as GitHub answers them: a review with
 * line comments (`POST pulls/{n}/reviews`; a comment's path must be a file the pull
 * request changes and its line one of the diff's, else 422), the listings, replies in
 * a comment's thread, and the `pull_request_review.submitted` webhook.
 */
import {
  HttpError,
  paginate,
  param,
  str,
  type Json,
  type RestContext,
  type RouteTable,
} from '../context.js';
import type { Double } from '../double.js';
import { authorAssociation } from '../fixtures.js';
import { runGit } from '../git.js';
import { now, nextId, type IssueRec, type RepoRec, type UserRec } from '../state.js';
import { pullJson } from './pulls.js';

export interface ReviewRec {
  readonly id: number;
  readonly pr: number;
  readonly author: string;
  readonly body: string;
  readonly state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  readonly commitId: string;
  readonly submittedAt: string;
}

export interface ReviewCommentRec {
  readonly id: number;
  readonly pr: number;
  readonly reviewId: number;
  readonly path: string;
  readonly line: number;
  readonly side: 'LEFT' | 'RIGHT';
  readonly body: string;
  readonly author: string;
  readonly commitId: string;
  readonly inReplyTo?: number;
  readonly createdAt: string;
}

interface Store {
  readonly reviews: ReviewRec[];
  readonly comments: ReviewCommentRec[];
}

const stores = new WeakMap<RepoRec, Store>();

/** The reviews and review comments of a repository (tests read them here). */
export function reviewStore(repo: RepoRec): Store {
  let s = stores.get(repo);
  if (s === undefined) {
    s = { reviews: [], comments: [] };
    stores.set(repo, s);
  }
  return s;
}

function repoOf(ctx: RestContext): RepoRec {
  return ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
}

function pullOf(
  ctx: RestContext,
  repo: RepoRec,
): IssueRec & { pull: NonNullable<IssueRec['pull']> } {
  const issue = repo.issues.get(Number(param(ctx, 'pull_number')));
  if (!issue?.pull) throw new HttpError(404, 'Not Found');
  return issue as IssueRec & { pull: NonNullable<IssueRec['pull']> };
}

/** Per changed file of `base...head`: its diff hunks' lines on each side. */
async function diffLines(
  dir: string,
  base: string,
  head: string,
): Promise<Map<string, { left: Set<number>; right: Set<number>; hunk: string }>> {
  const r = await runGit(dir, ['diff', '--no-color', '--no-ext-diff', '-U3', `${base}...${head}`]);
  const files = new Map<string, { left: Set<number>; right: Set<number>; hunk: string }>();
  let current: { left: Set<number>; right: Set<number>; hunk: string } | undefined;
  let left = 0;
  let right = 0;
  let oldPath = '';
  for (const line of r.stdout.toString('utf8').split('\n')) {
    if (line.startsWith('--- ')) {
      oldPath = line.slice(4).replace(/^a\//, '');
      continue;
    }
    if (line.startsWith('+++ ')) {
      const path = line.slice(4) === '/dev/null' ? oldPath : line.slice(4).replace(/^b\//, '');
      current = { left: new Set(), right: new Set(), hunk: '' };
      files.set(path, current);
      continue;
    }
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (m !== null && current !== undefined) {
      left = Number(m[1]);
      right = Number(m[2]);
      if (current.hunk === '') current.hunk = line;
      continue;
    }
    if (current === undefined || line.startsWith('diff ') || line.startsWith('index ')) continue;
    if (line.startsWith('+')) current.right.add(right++);
    else if (line.startsWith('-')) current.left.add(left++);
    else if (line.startsWith(' ')) {
      current.left.add(left++);
      current.right.add(right++);
    }
  }
  return files;
}

function reviewJson(double: Double, repo: RepoRec, r: ReviewRec): Json {
  const f = double.fixtures;
  const api = f.repoApi(repo);
  const html = `${double.url}/${repo.owner}/${repo.name}/pull/${r.pr}`;
  const author = double.user(r.author);
  return {
    id: r.id,
    node_id: `PRR_kwDO${r.id}`,
    user: f.user(author),
    body: r.body,
    state: r.state,
    html_url: `${html}#pullrequestreview-${r.id}`,
    pull_request_url: `${api}/pulls/${r.pr}`,
    _links: {
      html: { href: `${html}#pullrequestreview-${r.id}` },
      pull_request: { href: `${api}/pulls/${r.pr}` },
    },
    submitted_at: r.submittedAt,
    commit_id: r.commitId,
    author_association: authorAssociation(repo, author),
  };
}

function commentJson(double: Double, repo: RepoRec, c: ReviewCommentRec, hunk: string): Json {
  const f = double.fixtures;
  const api = f.repoApi(repo);
  const html = `${double.url}/${repo.owner}/${repo.name}/pull/${c.pr}#discussion_r${c.id}`;
  const author = double.user(c.author);
  return {
    url: `${api}/pulls/comments/${c.id}`,
    pull_request_review_id: c.reviewId,
    id: c.id,
    node_id: `PRRC_kwDO${c.id}`,
    diff_hunk: hunk,
    path: c.path,
    position: 1,
    original_position: 1,
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    ...(c.inReplyTo === undefined ? {} : { in_reply_to_id: c.inReplyTo }),
    user: f.user(author),
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    html_url: html,
    pull_request_url: `${api}/pulls/${c.pr}`,
    author_association: authorAssociation(repo, author),
    _links: {
      self: { href: `${api}/pulls/comments/${c.id}` },
      html: { href: html },
      pull_request: { href: `${api}/pulls/${c.pr}` },
    },
    start_line: null,
    original_start_line: null,
    start_side: null,
    line: c.line,
    original_line: c.line,
    side: c.side,
    subject_type: 'line',
  };
}

/**
 * The pull request as the webhook carries it: its repositories in the webhook form,
 * whose `organization` is a string when present (REST gives an object or null), so the
 * double leaves it out.
 */
function webhookPull(pull: Json): Json {
  const side = (part: unknown): Json => {
    const s = { ...(part as Json) };
    const repo = { ...(s['repo'] as Json) };
    if (typeof repo['organization'] !== 'string') delete repo['organization'];
    return { ...s, repo };
  };
  return { ...pull, head: side(pull['head']), base: side(pull['base']) };
}

const hunks = new WeakMap<ReviewCommentRec, string>();

export const reviewRoutes: RouteTable = {
  'POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews': async (ctx) => {
    const repo = repoOf(ctx);
    // Anyone who can read the repository may review it, without write permission.
    const actor = ctx.actor;
    if (!actor) throw new HttpError(401, 'Requires authentication');
    if (repo.private && ctx.double.permissionOf(repo, actor) === 'none') {
      throw new HttpError(404, 'Not Found');
    }
    const pr = pullOf(ctx, repo);
    const event = str(ctx.body, 'event') ?? 'COMMENT';
    const body = str(ctx.body, 'body') ?? '';
    const state =
      event === 'REQUEST_CHANGES'
        ? 'CHANGES_REQUESTED'
        : event === 'APPROVE'
          ? 'APPROVED'
          : 'COMMENTED';
    if (state !== 'APPROVED' && body === '' && !Array.isArray(ctx.body['comments'])) {
      throw new HttpError(422, 'Unprocessable Entity: Review body is required');
    }
    const git = ctx.double.git;
    const head = await git.resolveRef(repo.dir, `refs/heads/${pr.pull.head}`);
    const base = await git.resolveRef(repo.dir, `refs/heads/${pr.pull.base}`);
    if (!head || !base) throw new HttpError(422, 'Unprocessable Entity');
    const diff = await diffLines(repo.dir, base, head);
    const store = reviewStore(repo);
    const review: ReviewRec = {
      id: nextId(ctx.double.state),
      pr: pr.number,
      author: actor.login,
      body,
      state,
      commitId: head,
      submittedAt: now(),
    };
    const comments: ReviewCommentRec[] = [];
    for (const raw of (ctx.body['comments'] as Json[] | undefined) ?? []) {
      const path = String(raw['path']);
      const line = Number(raw['line']);
      const side = raw['side'] === 'LEFT' ? 'LEFT' : 'RIGHT';
      const file = diff.get(path);
      if (file === undefined)
        throw new HttpError(422, 'Unprocessable Entity: Path could not be resolved');
      if (!(side === 'LEFT' ? file.left : file.right).has(line)) {
        throw new HttpError(422, 'Unprocessable Entity: Line could not be resolved');
      }
      const c: ReviewCommentRec = {
        id: nextId(ctx.double.state),
        pr: pr.number,
        reviewId: review.id,
        path,
        line,
        side,
        body: String(raw['body']),
        author: actor.login,
        commitId: head,
        createdAt: review.submittedAt,
      };
      hunks.set(c, file.hunk);
      comments.push(c);
    }
    store.reviews.push(review);
    store.comments.push(...comments);
    const json = reviewJson(ctx.double, repo, review);
    ctx.double.emit('pull_request_review', 'submitted', {
      review: { ...json, state: state.toLowerCase() },
      pull_request: webhookPull(await pullJson(ctx.double, repo, pr, true)),
      ...ctx.double.hookContext(repo, actor),
    });
    return { status: 200, body: json };
  },
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews': (ctx) => {
    const repo = repoOf(ctx);
    const pr = pullOf(ctx, repo);
    const all = reviewStore(repo).reviews.filter((r) => r.pr === pr.number);
    const { page, headers } = paginate(ctx, all);
    return { status: 200, body: page.map((r) => reviewJson(ctx.double, repo, r)), headers };
  },
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/comments': (ctx) => {
    const repo = repoOf(ctx);
    const pr = pullOf(ctx, repo);
    const all = reviewStore(repo).comments.filter((c) => c.pr === pr.number);
    const { page, headers } = paginate(ctx, all);
    return {
      status: 200,
      body: page.map((c) => commentJson(ctx.double, repo, c, hunks.get(c) ?? '')),
      headers,
    };
  },
  'POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies': (ctx) => {
    const repo = repoOf(ctx);
    const actor: UserRec = ctx.double.requireWrite(repo, ctx.actor);
    const pr = pullOf(ctx, repo);
    const store = reviewStore(repo);
    const to = store.comments.find(
      (c) => c.id === Number(param(ctx, 'comment_id')) && c.pr === pr.number,
    );
    if (to === undefined) throw new HttpError(404, 'Not Found');
    const body = String(ctx.body['body']);
    if (body.length > 65536)
      throw new HttpError(422, 'Body is too long (maximum is 65536 characters)');
    // A reply joins the thread of its first comment.
    const root = to.inReplyTo ?? to.id;
    const c: ReviewCommentRec = {
      ...to,
      id: nextId(ctx.double.state),
      body,
      author: actor.login,
      inReplyTo: root,
      createdAt: now(),
    };
    hunks.set(c, hunks.get(to) ?? '');
    store.comments.push(c);
    return { status: 201, body: commentJson(ctx.double, repo, c, hunks.get(c) ?? '') };
  },
};
