/** Issues, labels, comments, sub-issues and blocked-by dependencies. */
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
import { nextId, now, type IssueRec, type RepoRec, type UserRec } from '../state.js';

function repoOf(ctx: RestContext): RepoRec {
  return ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
}

function issueOf(ctx: RestContext, repo: RepoRec): IssueRec {
  return ctx.double.issue(repo, Number(param(ctx, 'issue_number')));
}

function labelNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => {
    if (typeof v === 'string') return [v];
    if (v && typeof v === 'object' && typeof (v as Json)['name'] === 'string')
      return [(v as Json)['name'] as string];
    return [];
  });
}

function touch(issue: IssueRec): void {
  issue.updatedAt = now();
}

/** Adds labels, emitting `issues.labeled` for each new one. */
export function addLabels(
  double: Double,
  repo: RepoRec,
  issue: IssueRec,
  names: readonly string[],
  sender: UserRec,
): void {
  for (const name of names) {
    const label = double.ensureLabel(repo, name);
    if (issue.labels.some((l) => l.toLowerCase() === label.name.toLowerCase())) continue;
    issue.labels.push(label.name);
    touch(issue);
    double.stats.timeline.push({
      kind: 'labeled',
      at: double.clock.now(),
      repo: repo.key,
      issue: issue.number,
      label: label.name,
    });
    double.emit(issue.pull ? 'pull_request' : 'issues', 'labeled', {
      ...(issue.pull ? {} : { issue: double.issueJson(repo, issue) }),
      label: double.fixtures.label(repo, label),
      ...double.hookContext(repo, sender),
    });
  }
}

export function removeLabel(
  double: Double,
  repo: RepoRec,
  issue: IssueRec,
  name: string,
  sender: UserRec,
): boolean {
  const idx = issue.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
  if (idx < 0) return false;
  const [removed = name] = issue.labels.splice(idx, 1);
  touch(issue);
  const label = double.ensureLabel(repo, removed);
  double.emit('issues', 'unlabeled', {
    issue: double.issueJson(repo, issue),
    label: double.fixtures.label(repo, label),
    ...double.hookContext(repo, sender),
  });
  return true;
}

export function createComment(
  double: Double,
  repo: RepoRec,
  issue: IssueRec,
  body: string,
  author: UserRec,
): Json {
  const id = nextId(double.state);
  const t = now();
  const c = {
    repoKey: repo.key,
    id,
    nodeId: `IC_kwDO${id}`,
    issueNumber: issue.number,
    body,
    author: author.login,
    createdAt: t,
    updatedAt: t,
  };
  repo.comments.push(c);
  touch(issue);
  const json = double.fixtures.comment(repo, c, author);
  double.emit('issue_comment', 'created', {
    issue: double.issueJson(repo, issue),
    comment: json,
    ...double.hookContext(repo, author),
  });
  return json;
}

function setState(
  double: Double,
  repo: RepoRec,
  issue: IssueRec,
  state: string,
  reason: string | undefined,
  sender: UserRec,
): void {
  if (state === issue.state) return;
  if (state === 'closed') {
    issue.state = 'closed';
    issue.stateReason = reason === 'not_planned' || reason === 'duplicate' ? reason : 'completed';
    issue.closedAt = now();
    issue.closedBy = sender.login;
  } else {
    issue.state = 'open';
    issue.stateReason = 'reopened';
    issue.closedAt = null;
    issue.closedBy = null;
  }
  touch(issue);
  if (!issue.pull) {
    double.emit('issues', state === 'closed' ? 'closed' : 'reopened', {
      issue: double.issueJson(repo, issue),
      ...double.hookContext(repo, sender),
    });
  }
}

function subIssueLink(
  double: Double,
  repo: RepoRec,
  parent: IssueRec,
  child: IssueRec,
  sender: UserRec,
): void {
  const ctx = double.hookContext(repo, sender);
  const childRepo = double.state.repos.get(child.repoKey) ?? repo;
  double.emit('sub_issues', 'sub_issue_added', {
    parent_issue_id: parent.id,
    parent_issue: double.issueJson(repo, parent),
    parent_issue_repo: ctx['repository'],
    sub_issue_id: child.id,
    sub_issue: double.issueJson(childRepo, child),
    sub_issue_repo: double.repoJson(childRepo),
    ...ctx,
  });
}

function dependencyEvent(
  double: Double,
  action: 'blocked_by_added' | 'blocked_by_removed',
  repo: RepoRec,
  blocked: IssueRec,
  blocking: { repo: RepoRec; issue: IssueRec },
  sender: UserRec,
): void {
  double.emit('issue_dependencies', action, {
    blocked_issue_id: blocked.id,
    blocked_issue: double.issueJson(repo, blocked),
    blocking_issue_id: blocking.issue.id,
    blocking_issue: double.issueJson(blocking.repo, blocking.issue),
    blocking_issue_repo: double.repoJson(blocking.repo),
    ...double.hookContext(repo, sender),
  });
}

export const issueRoutes: RouteTable = {
  'GET /repos/{owner}/{repo}/issues': (ctx) => {
    const repo = repoOf(ctx);
    const state = ctx.query.get('state') ?? 'open';
    const labels = (ctx.query.get('labels') ?? '')
      .split(',')
      .filter((l) => l.length > 0)
      .map((l) => l.toLowerCase());
    const creator = ctx.query.get('creator')?.toLowerCase();
    const all = [...repo.issues.values()]
      .filter((i) => state === 'all' || i.state === state)
      .filter((i) => labels.every((l) => i.labels.some((x) => x.toLowerCase() === l)))
      .filter((i) => creator === undefined || i.author.toLowerCase() === creator)
      .sort((a, b) =>
        ctx.query.get('direction') === 'asc' ? a.number - b.number : b.number - a.number,
      );
    const { page, headers } = paginate(ctx, all);
    return { status: 200, body: page.map((i) => ctx.double.issueJson(repo, i)), headers };
  },
  'POST /repos/{owner}/{repo}/issues': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const title = ctx.body['title'];
    const issue = ctx.double.newIssue(repo, actor, {
      title: String(title),
      body: str(ctx.body, 'body') ?? null,
    });
    ctx.double.emit('issues', 'opened', {
      issue: ctx.double.issueJson(repo, issue),
      ...ctx.double.hookContext(repo, actor),
    });
    addLabels(ctx.double, repo, issue, labelNames(ctx.body['labels']), actor);
    return { status: 201, body: ctx.double.issueJson(repo, issue) };
  },
  'GET /repos/{owner}/{repo}/issues/{issue_number}': (ctx) => {
    const repo = repoOf(ctx);
    return { status: 200, body: ctx.double.issueJson(repo, issueOf(ctx, repo)) };
  },
  'PATCH /repos/{owner}/{repo}/issues/{issue_number}': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const issue = issueOf(ctx, repo);
    const changes: Json = {};
    if (typeof ctx.body['title'] === 'string' && ctx.body['title'] !== issue.title) {
      changes['title'] = { from: issue.title };
      issue.title = ctx.body['title'];
    }
    if ('body' in ctx.body && ctx.body['body'] !== issue.body) {
      changes['body'] = { from: issue.body ?? '' };
      issue.body = (ctx.body['body'] as string | null) ?? null;
    }
    if (Object.keys(changes).length > 0) {
      touch(issue);
      ctx.double.emit('issues', 'edited', {
        issue: ctx.double.issueJson(repo, issue),
        changes,
        ...ctx.double.hookContext(repo, actor),
      });
    }
    if ('labels' in ctx.body) {
      const wanted = labelNames(ctx.body['labels']);
      for (const l of [...issue.labels]) {
        if (!wanted.some((w) => w.toLowerCase() === l.toLowerCase()))
          removeLabel(ctx.double, repo, issue, l, actor);
      }
      addLabels(ctx.double, repo, issue, wanted, actor);
    }
    const state = str(ctx.body, 'state');
    if (state) setState(ctx.double, repo, issue, state, str(ctx.body, 'state_reason'), actor);
    return { status: 200, body: ctx.double.issueJson(repo, issue) };
  },

  // Labels
  'GET /repos/{owner}/{repo}/labels': (ctx) => {
    const repo = repoOf(ctx);
    const { page, headers } = paginate(ctx, [...repo.labels.values()]);
    return { status: 200, body: page.map((l) => ctx.double.fixtures.label(repo, l)), headers };
  },
  'POST /repos/{owner}/{repo}/labels': (ctx) => {
    const repo = repoOf(ctx);
    ctx.double.requireWrite(repo, ctx.actor);
    const name = String(ctx.body['name']);
    if (repo.labels.has(name.toLowerCase())) {
      throw new HttpError(422, 'Validation Failed: label already_exists');
    }
    const label = ctx.double.ensureLabel(
      repo,
      name,
      str(ctx.body, 'color') ?? 'ededed',
      str(ctx.body, 'description') ?? null,
    );
    return { status: 201, body: ctx.double.fixtures.label(repo, label) };
  },
  'GET /repos/{owner}/{repo}/labels/{name}': (ctx) => {
    const repo = repoOf(ctx);
    const label = repo.labels.get(param(ctx, 'name').toLowerCase());
    if (!label) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.double.fixtures.label(repo, label) };
  },
  'GET /repos/{owner}/{repo}/issues/{issue_number}/labels': (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx, repo);
    const labels = issue.labels.map((n) => ctx.double.ensureLabel(repo, n));
    const { page, headers } = paginate(ctx, labels);
    return { status: 200, body: page.map((l) => ctx.double.fixtures.label(repo, l)), headers };
  },
  'POST /repos/{owner}/{repo}/issues/{issue_number}/labels': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const issue = issueOf(ctx, repo);
    const body = ctx.body as unknown;
    addLabels(
      ctx.double,
      repo,
      issue,
      labelNames(Array.isArray(body) ? body : ctx.body['labels']),
      actor,
    );
    return {
      status: 200,
      body: issue.labels.map((n) =>
        ctx.double.fixtures.label(repo, ctx.double.ensureLabel(repo, n)),
      ),
    };
  },
  'DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const issue = issueOf(ctx, repo);
    if (!removeLabel(ctx.double, repo, issue, param(ctx, 'name'), actor))
      throw new HttpError(404, 'Label does not exist');
    return {
      status: 200,
      body: issue.labels.map((n) =>
        ctx.double.fixtures.label(repo, ctx.double.ensureLabel(repo, n)),
      ),
    };
  },

  // Assignees: as on GitHub, a login that cannot be assigned (no access) is left out silently.
  'POST /repos/{owner}/{repo}/issues/{issue_number}/assignees': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const issue = issueOf(ctx, repo);
    const asked = ctx.body['assignees'];
    for (const login of Array.isArray(asked) ? asked : []) {
      if (typeof login !== 'string') continue;
      const user = ctx.double.user(login);
      if (ctx.double.permissionOf(repo, user) === 'none') continue;
      if (issue.assignees.some((a) => a.toLowerCase() === user.login.toLowerCase())) continue;
      if (issue.assignees.length >= 10) break;
      issue.assignees.push(user.login);
      touch(issue);
      ctx.double.emit('issues', 'assigned', {
        issue: ctx.double.issueJson(repo, issue),
        assignee: ctx.double.fixtures.user(user),
        ...ctx.double.hookContext(repo, actor),
      });
    }
    return { status: 201, body: ctx.double.issueJson(repo, issue) };
  },

  // Comments
  'GET /repos/{owner}/{repo}/issues/{issue_number}/comments': (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx, repo);
    const all = repo.comments.filter((c) => c.issueNumber === issue.number);
    const { page, headers } = paginate(ctx, all);
    return {
      status: 200,
      body: page.map((c) => ctx.double.fixtures.comment(repo, c, ctx.double.user(c.author))),
      headers,
    };
  },
  'POST /repos/{owner}/{repo}/issues/{issue_number}/comments': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const issue = issueOf(ctx, repo);
    const body = String(ctx.body['body']);
    if (body.length > 65536)
      throw new HttpError(422, 'Body is too long (maximum is 65536 characters)');
    return { status: 201, body: createComment(ctx.double, repo, issue, body, actor) };
  },
  'GET /repos/{owner}/{repo}/issues/comments/{comment_id}': (ctx) => {
    const repo = repoOf(ctx);
    const c = repo.comments.find((x) => x.id === Number(param(ctx, 'comment_id')));
    if (!c) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.double.fixtures.comment(repo, c, ctx.double.user(c.author)) };
  },
  'PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const c = repo.comments.find((x) => x.id === Number(param(ctx, 'comment_id')));
    if (!c) throw new HttpError(404, 'Not Found');
    const body = String(ctx.body['body']);
    if (body.length > 65536)
      throw new HttpError(422, 'Body is too long (maximum is 65536 characters)');
    const from = c.body;
    c.body = body;
    c.updatedAt = now();
    const json = ctx.double.fixtures.comment(repo, c, ctx.double.user(c.author));
    const issue = repo.issues.get(c.issueNumber);
    if (issue) {
      ctx.double.emit('issue_comment', 'edited', {
        issue: ctx.double.issueJson(repo, issue),
        comment: json,
        changes: { body: { from } },
        ...ctx.double.hookContext(repo, actor),
      });
    }
    return { status: 200, body: json };
  },

  // Sub-issues
  'GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues': (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx, repo);
    const subs = issue.subIssueIds.flatMap((id) => {
      const f = ctx.double.issueById(id);
      return f ? [ctx.double.issueJson(f.repo, f.issue)] : [];
    });
    const { page, headers } = paginate(ctx, subs);
    return { status: 200, body: page, headers };
  },
  'POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const parent = issueOf(ctx, repo);
    const found = ctx.double.issueById(Number(ctx.body['sub_issue_id']));
    if (!found || found.repo.owner.toLowerCase() !== repo.owner.toLowerCase()) {
      throw new HttpError(
        422,
        'Validation Failed: sub_issue_id must be an issue of the same repository owner',
      );
    }
    const child = found.issue;
    if (child.id === parent.id)
      throw new HttpError(422, 'Validation Failed: an issue cannot be its own sub-issue');
    if (child.parentId !== null && child.parentId !== parent.id) {
      if (ctx.body['replace_parent'] !== true)
        throw new HttpError(422, 'Validation Failed: sub-issue already has a parent');
      const old = ctx.double.issueById(child.parentId);
      if (old) old.issue.subIssueIds = old.issue.subIssueIds.filter((x) => x !== child.id);
    }
    if (!parent.subIssueIds.includes(child.id)) {
      if (parent.subIssueIds.length >= 100)
        throw new HttpError(422, 'Validation Failed: a parent can have at most 100 sub-issues');
      parent.subIssueIds.push(child.id);
      child.parentId = parent.id;
      touch(parent);
      subIssueLink(ctx.double, repo, parent, child, actor);
    }
    return {
      status: 201,
      body: ctx.double.issueJson(repo, parent),
      headers: {
        location: `${ctx.double.fixtures.repoApi(repo)}/issues/${parent.number}/sub_issues`,
      },
    };
  },
  'DELETE /repos/{owner}/{repo}/issues/{issue_number}/sub_issue': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const parent = issueOf(ctx, repo);
    const id = Number(ctx.body['sub_issue_id']);
    const found = ctx.double.issueById(id);
    if (!found || !parent.subIssueIds.includes(id)) throw new HttpError(404, 'Not Found');
    parent.subIssueIds = parent.subIssueIds.filter((x) => x !== id);
    found.issue.parentId = null;
    const hook = ctx.double.hookContext(repo, actor);
    ctx.double.emit('sub_issues', 'sub_issue_removed', {
      parent_issue_id: parent.id,
      parent_issue: ctx.double.issueJson(repo, parent),
      parent_issue_repo: hook['repository'],
      sub_issue_id: found.issue.id,
      sub_issue: ctx.double.issueJson(found.repo, found.issue),
      sub_issue_repo: ctx.double.repoJson(found.repo),
      ...hook,
    });
    return { status: 200, body: ctx.double.issueJson(found.repo, found.issue) };
  },
  'GET /repos/{owner}/{repo}/issues/{issue_number}/parent': (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx, repo);
    const parent = issue.parentId === null ? undefined : ctx.double.issueById(issue.parentId);
    if (!parent) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.double.issueJson(parent.repo, parent.issue) };
  },

  // Issue dependencies (blocked by)
  'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by': (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx, repo);
    const list = issue.blockedByIds.flatMap((id) => {
      const f = ctx.double.issueById(id);
      return f ? [ctx.double.issueJson(f.repo, f.issue)] : [];
    });
    const { page, headers } = paginate(ctx, list);
    return { status: 200, body: page, headers };
  },
  'POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by': (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const issue = issueOf(ctx, repo);
    const blocker = ctx.double.issueById(Number(ctx.body['issue_id']));
    if (!blocker) throw new HttpError(404, 'Not Found');
    if (blocker.issue.id === issue.id)
      throw new HttpError(422, 'Validation Failed: an issue cannot block itself');
    if (!issue.blockedByIds.includes(blocker.issue.id)) {
      issue.blockedByIds.push(blocker.issue.id);
      touch(issue);
      dependencyEvent(ctx.double, 'blocked_by_added', repo, issue, blocker, actor);
    }
    return {
      status: 201,
      body: ctx.double.issueJson(blocker.repo, blocker.issue),
      headers: {
        location: `${ctx.double.fixtures.repoApi(repo)}/issues/${issue.number}/dependencies/blocked_by`,
      },
    };
  },
  'DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}': (
    ctx,
  ) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const issue = issueOf(ctx, repo);
    const id = Number(param(ctx, 'issue_id'));
    const blocker = ctx.double.issueById(id);
    if (!blocker || !issue.blockedByIds.includes(id)) throw new HttpError(404, 'Not Found');
    issue.blockedByIds = issue.blockedByIds.filter((x) => x !== id);
    dependencyEvent(ctx.double, 'blocked_by_removed', repo, issue, blocker, actor);
    return { status: 200, body: ctx.double.issueJson(blocker.repo, blocker.issue) };
  },
  'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking': (ctx) => {
    const repo = repoOf(ctx);
    const issue = issueOf(ctx, repo);
    const list: Json[] = [];
    for (const r of ctx.double.state.repos.values()) {
      for (const other of r.issues.values()) {
        if (other.blockedByIds.includes(issue.id)) list.push(ctx.double.issueJson(r, other));
      }
    }
    const { page, headers } = paginate(ctx, list);
    return { status: 200, body: page, headers };
  },
};
