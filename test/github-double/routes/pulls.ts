/** Pull requests (stored as issues with a `pull` part, as on GitHub). */
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
import { closePull, compareJson, mergePull, mergeableOf } from '../landing.js';
import { now, type IssueRec, type RepoRec } from '../state.js';

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

/** The full `pull-request` object; `simple` drops the fields only the single view carries. */
export async function pullJson(
  double: Double,
  repo: RepoRec,
  issue: IssueRec,
  simple = false,
): Promise<Json> {
  const pull = issue.pull;
  if (!pull) throw new Error(`#${issue.number} is not a pull request`);
  const f = double.fixtures;
  const api = f.repoApi(repo);
  const html = `${double.url}/${repo.owner}/${repo.name}/pull/${issue.number}`;
  const repoJson = double.repoJson(repo);
  const owner = f.user(double.user(repo.owner));
  const side = async (ref: string): Promise<Json> => ({
    label: `${repo.owner}:${ref}`,
    ref,
    sha: (await double.git.resolveRef(repo.dir, `refs/heads/${ref}`)) ?? '0'.repeat(40),
    user: owner,
    repo: repoJson,
  });
  const issueJson = double.issueJson(repo, issue);
  const base: Json = {
    url: `${api}/pulls/${issue.number}`,
    id: issue.id,
    node_id: issue.nodeId,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${api}/issues/${issue.number}`,
    commits_url: `${api}/pulls/${issue.number}/commits`,
    review_comments_url: `${api}/pulls/${issue.number}/comments`,
    review_comment_url: `${api}/pulls/comments{/number}`,
    comments_url: `${api}/issues/${issue.number}/comments`,
    statuses_url: `${api}/statuses/${issue.number}`,
    number: issue.number,
    state: issue.state,
    locked: false,
    title: issue.title,
    user: issueJson['user'],
    body: issue.body,
    labels: issueJson['labels'],
    milestone: null,
    active_lock_reason: null,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: issue.closedAt,
    merged_at: pull.merged ? issue.closedAt : null,
    merge_commit_sha: pull.mergeCommitSha ?? null,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: await side(pull.head),
    base: await side(pull.base),
    _links: {
      self: { href: `${api}/pulls/${issue.number}` },
      html: { href: html },
      issue: { href: `${api}/issues/${issue.number}` },
      comments: { href: `${api}/issues/${issue.number}/comments` },
      review_comments: { href: `${api}/pulls/${issue.number}/comments` },
      review_comment: { href: `${api}/pulls/comments{/number}` },
      commits: { href: `${api}/pulls/${issue.number}/commits` },
      statuses: { href: `${api}/statuses/${issue.number}` },
    },
    author_association: issueJson['author_association'],
    auto_merge: null,
    draft: pull.draft,
  };
  if (simple) return base;
  return {
    ...base,
    merged: pull.merged,
    ...(await mergeableOf(double, repo, issue as IssueRec & { pull: typeof pull })),
    rebaseable: null,
    merged_by: pull.mergedBy === undefined ? null : f.user(double.user(pull.mergedBy)),
    comments: issueJson['comments'],
    review_comments: 0,
    maintainer_can_modify: false,
    commits: 1,
    additions: 0,
    deletions: 0,
    changed_files: 0,
  };
}

export const pullRoutes: RouteTable = {
  'GET /repos/{owner}/{repo}/pulls': async (ctx) => {
    const repo = repoOf(ctx);
    const state = ctx.query.get('state') ?? 'open';
    const head = ctx.query.get('head');
    const base = ctx.query.get('base');
    const all = [...repo.issues.values()]
      .filter((i) => i.pull !== undefined)
      .filter((i) => state === 'all' || i.state === state)
      .filter((i) => !head || `${repo.owner}:${i.pull?.head}`.toLowerCase() === head.toLowerCase())
      .filter((i) => !base || i.pull?.base === base)
      .sort((a, b) => b.number - a.number);
    const { page, headers } = paginate(ctx, all);
    return {
      status: 200,
      body: await Promise.all(page.map((i) => pullJson(ctx.double, repo, i, true))),
      headers,
    };
  },
  'POST /repos/{owner}/{repo}/pulls': async (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const head = String(ctx.body['head']).replace(/^[^:]+:/, '');
    const base = String(ctx.body['base']);
    const git = ctx.double.git;
    const headSha = await git.resolveRef(repo.dir, `refs/heads/${head}`);
    const baseSha = await git.resolveRef(repo.dir, `refs/heads/${base}`);
    if (!headSha || !baseSha)
      throw new HttpError(422, 'Validation Failed: head or base branch does not exist');
    for (const i of repo.issues.values()) {
      if (i.pull && i.state === 'open' && i.pull.head === head && i.pull.base === base) {
        throw new HttpError(
          422,
          `Validation Failed: A pull request already exists for ${repo.owner}:${head}.`,
        );
      }
    }
    if (headSha === baseSha || (await git.isAncestor(repo.dir, headSha, baseSha))) {
      throw new HttpError(422, `Validation Failed: No commits between ${base} and ${head}`);
    }
    const issue = ctx.double.newIssue(repo, actor, {
      title: str(ctx.body, 'title') ?? head,
      body: str(ctx.body, 'body') ?? null,
    });
    issue.pull = { head, base, draft: ctx.body['draft'] === true, merged: false };
    const json = await pullJson(ctx.double, repo, issue);
    return { status: 201, body: json, headers: { location: String(json['url']) } };
  },
  'GET /repos/{owner}/{repo}/pulls/{pull_number}': async (ctx) => {
    const repo = repoOf(ctx);
    return { status: 200, body: await pullJson(ctx.double, repo, pullOf(ctx, repo)) };
  },
  'PATCH /repos/{owner}/{repo}/pulls/{pull_number}': async (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const pr = pullOf(ctx, repo);
    const title = str(ctx.body, 'title');
    if (title !== undefined) pr.title = title;
    if ('body' in ctx.body) pr.body = (ctx.body['body'] as string | null) ?? null;
    const state = str(ctx.body, 'state');
    if (state === 'closed' && pr.state === 'open') {
      await closePull(ctx.double, repo, pr, actor);
    } else if (state === 'open' && pr.state === 'closed' && !pr.pull.merged) {
      pr.state = 'open';
      pr.closedAt = null;
    }
    pr.updatedAt = now();
    return { status: 200, body: await pullJson(ctx.double, repo, pr) };
  },
  'PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge': async (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const method = str(ctx.body, 'merge_method') ?? 'merge';
    if (method !== 'merge') {
      throw new HttpError(405, `${method} merges are not supported by this double`);
    }
    const body = await mergePull(ctx.double, repo, pullOf(ctx, repo), actor, {
      sha: str(ctx.body, 'sha'),
      title: str(ctx.body, 'commit_title'),
      message: str(ctx.body, 'commit_message'),
    });
    return { status: 200, body };
  },
  'GET /repos/{owner}/{repo}/compare/{base}...{head}': async (ctx) => {
    const repo = repoOf(ctx);
    const basehead = `${param(ctx, 'base')}...${param(ctx, 'head')}`;
    return { status: 200, body: await compareJson(ctx.double, repo, basehead) };
  },
};
