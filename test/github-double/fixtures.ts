/**
 * Complete REST objects built from the double's state. Each starts from the spec's own
 * example object (so every required property is present, as in GitHub's answers) and
 * overrides what the state knows; example URLs are rewritten to the double's address.
 */
import type { RestSpec } from './spec.js';
import type {
  AppRec,
  CheckRunRec,
  CommentRec,
  IssueRec,
  JobRec,
  LabelRec,
  Permission,
  RepoRec,
  RunRec,
  StatusRec,
  UserRec,
} from './state.js';

type Json = Record<string, unknown>;

export interface CommitInfo {
  readonly sha: string;
  readonly tree: string;
  readonly parents: readonly string[];
  readonly message: string;
  readonly author: { name: string; email: string; date: string };
  readonly committer: { name: string; email: string; date: string };
}

export class Fixtures {
  private readonly examples = new Map<string, Json>();

  constructor(
    private readonly spec: RestSpec,
    readonly base: string,
  ) {}

  /**
   * Spec example with GitHub hosts replaced by the double's own address. Cached: callers
   * spread it and override, never mutate it.
   */
  private example(name: string): Json {
    let ex = this.examples.get(name);
    if (!ex) {
      ex = rewrite(this.spec.example(name), this.base) as Json;
      this.examples.set(name, ex);
    }
    return ex;
  }

  repoApi(repo: RepoRec): string {
    return `${this.base}/repos/${repo.owner}/${repo.name}`;
  }

  user(u: UserRec): Json {
    // Bot logins contain brackets (`epicflow[bot]`); GitHub percent-encodes them in URLs.
    const api = `${this.base}/users/${encodeURIComponent(u.login)}`;
    return {
      login: u.login,
      id: u.id,
      node_id: u.nodeId,
      avatar_url: `${this.base}/avatars/u/${u.id}`,
      gravatar_id: '',
      url: api,
      html_url:
        u.type === 'Bot'
          ? `${this.base}/apps/${encodeURIComponent(u.login.replace(/\[bot\]$/, ''))}`
          : `${this.base}/${u.login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: u.type,
      user_view_type: 'public',
      site_admin: false,
    };
  }

  /** `GET /user`: the private view of the authenticated user. */
  privateUser(u: UserRec): Json {
    return {
      ...this.example('private-user'),
      ...this.user(u),
      user_view_type: 'private',
      name: u.login,
      email: null,
      company: null,
      blog: '',
      location: null,
      bio: null,
      twitter_username: null,
    };
  }

  repo(repo: RepoRec, owner: UserRec, permission?: Permission): Json {
    const ex = this.example('full-repository');
    const api = this.repoApi(repo);
    const full: Json = {};
    // Rebase every templated URL on this repository.
    for (const [k, v] of Object.entries(ex)) {
      full[k] =
        typeof v === 'string' && v.startsWith(`${this.base}/repos/octocat/Hello-World`)
          ? api + v.slice(`${this.base}/repos/octocat/Hello-World`.length)
          : v;
    }
    const perms = permissionFlags(permission ?? 'read');
    return {
      ...full,
      id: repo.id,
      node_id: repo.nodeId,
      name: repo.name,
      full_name: `${repo.owner}/${repo.name}`,
      owner: this.user(owner),
      private: repo.private,
      visibility: repo.private ? 'private' : 'public',
      html_url: `${this.base}/${repo.owner}/${repo.name}`,
      clone_url: `${this.base}/${repo.owner}/${repo.name}.git`,
      git_url: `${this.base}/${repo.owner}/${repo.name}.git`,
      ssh_url: `git@127.0.0.1:${repo.owner}/${repo.name}.git`,
      svn_url: `${this.base}/${repo.owner}/${repo.name}`,
      mirror_url: null,
      homepage: null,
      description: null,
      language: null,
      license: null,
      fork: repo.forkOf !== undefined,
      has_issues: true,
      has_projects: true,
      has_wiki: false,
      has_pages: false,
      has_discussions: false,
      default_branch: repo.defaultBranch,
      delete_branch_on_merge: repo.deleteBranchOnMerge === true,
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      pushed_at: repo.createdAt,
      open_issues: countOpen(repo),
      open_issues_count: countOpen(repo),
      permissions: perms,
      organization: owner.type === 'Organization' ? this.user(owner) : null,
      template_repository: null,
      parent: undefined,
      source: undefined,
      security_and_analysis: undefined,
    };
  }

  label(repo: RepoRec, l: LabelRec): Json {
    return {
      id: l.id,
      node_id: l.nodeId,
      url: `${this.repoApi(repo)}/labels/${encodeURIComponent(l.name)}`,
      name: l.name,
      description: l.description,
      color: l.color,
      default: false,
    };
  }

  issue(
    repo: RepoRec,
    i: IssueRec,
    users: (login: string) => UserRec,
    counts: { comments: number; subCompleted: number; blockedBy: number; blocking: number },
  ): Json {
    const api = `${this.repoApi(repo)}/issues/${i.number}`;
    const html = `${this.base}/${repo.owner}/${repo.name}/${i.pull ? 'pull' : 'issues'}/${i.number}`;
    const total = i.subIssueIds.length;
    const parent = i.parentId;
    return {
      id: i.id,
      node_id: i.nodeId,
      url: api,
      repository_url: this.repoApi(repo),
      labels_url: `${api}/labels{/name}`,
      comments_url: `${api}/comments`,
      events_url: `${api}/events`,
      html_url: html,
      number: i.number,
      state: i.state,
      state_reason: i.stateReason,
      title: i.title,
      body: i.body,
      user: this.user(users(i.author)),
      labels: i.labels.flatMap((name) => {
        const l = repo.labels.get(name.toLowerCase());
        return l ? [this.label(repo, l)] : [];
      }),
      assignee: i.assignees[0] === undefined ? null : this.user(users(i.assignees[0])),
      assignees: i.assignees.map((login) => this.user(users(login))),
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: counts.comments,
      ...(i.pull
        ? {
            pull_request: {
              url: `${this.repoApi(repo)}/pulls/${i.number}`,
              html_url: html,
              diff_url: `${html}.diff`,
              patch_url: `${html}.patch`,
              merged_at: null,
            },
          }
        : {}),
      closed_at: i.closedAt,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      ...(i.pull ? { draft: i.pull.draft } : {}),
      closed_by: i.closedBy === null ? null : this.user(users(i.closedBy)),
      author_association: authorAssociation(repo, users(i.author)),
      timeline_url: `${api}/timeline`,
      performed_via_github_app: null,
      reactions: {
        url: `${api}/reactions`,
        total_count: 0,
        '+1': 0,
        '-1': 0,
        laugh: 0,
        confused: 0,
        heart: 0,
        hooray: 0,
        eyes: 0,
        rocket: 0,
      },
      sub_issues_summary: {
        total,
        completed: counts.subCompleted,
        percent_completed: total === 0 ? 0 : Math.floor((counts.subCompleted * 100) / total),
      },
      issue_dependencies_summary: {
        blocked_by: counts.blockedBy,
        blocking: counts.blocking,
        total_blocked_by: counts.blockedBy,
        total_blocking: counts.blocking,
      },
      ...(parent === null ? {} : { parent_issue_url: `${this.repoApi(repo)}/issues/${parent}` }),
      pinned_comment: null,
    };
  }

  comment(repo: RepoRec, c: CommentRec, author: UserRec): Json {
    const api = this.repoApi(repo);
    return {
      id: c.id,
      node_id: c.nodeId,
      url: `${api}/issues/comments/${c.id}`,
      html_url: `${this.base}/${repo.owner}/${repo.name}/issues/${c.issueNumber}#issuecomment-${c.id}`,
      body: c.body,
      user: this.user(author),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      issue_url: `${api}/issues/${c.issueNumber}`,
      author_association: authorAssociation(repo, author),
      performed_via_github_app: null,
      reactions: {
        url: `${api}/issues/comments/${c.id}/reactions`,
        total_count: 0,
        '+1': 0,
        '-1': 0,
        laugh: 0,
        confused: 0,
        heart: 0,
        hooray: 0,
        eyes: 0,
        rocket: 0,
      },
    };
  }

  ref(repo: RepoRec, ref: string, sha: string): Json {
    return {
      ref,
      node_id: Buffer.from(`ref:${repo.key}:${ref}`).toString('base64'),
      url: `${this.repoApi(repo)}/git/${ref}`,
      object: { type: 'commit', sha, url: `${this.repoApi(repo)}/git/commits/${sha}` },
    };
  }

  gitCommit(repo: RepoRec, c: CommitInfo): Json {
    const api = this.repoApi(repo);
    return {
      sha: c.sha,
      node_id: Buffer.from(`commit:${c.sha}`).toString('base64'),
      url: `${api}/git/commits/${c.sha}`,
      html_url: `${this.base}/${repo.owner}/${repo.name}/commit/${c.sha}`,
      author: c.author,
      committer: c.committer,
      message: c.message,
      tree: { sha: c.tree, url: `${api}/git/trees/${c.tree}` },
      parents: c.parents.map((p) => ({
        sha: p,
        url: `${api}/git/commits/${p}`,
        html_url: `${this.base}/${repo.owner}/${repo.name}/commit/${p}`,
      })),
      verification: {
        verified: false,
        reason: 'unsigned',
        signature: null,
        payload: null,
        verified_at: null,
      },
    };
  }

  /** The `commit` schema (merges API): a commit with its git commit nested. */
  commit(repo: RepoRec, c: CommitInfo): Json {
    const api = this.repoApi(repo);
    const git = this.gitCommit(repo, c);
    return {
      url: `${api}/commits/${c.sha}`,
      sha: c.sha,
      node_id: git['node_id'],
      html_url: git['html_url'],
      comments_url: `${api}/commits/${c.sha}/comments`,
      commit: {
        url: git['url'],
        author: c.author,
        committer: c.committer,
        message: c.message,
        comment_count: 0,
        tree: git['tree'],
        verification: git['verification'],
      },
      author: null,
      committer: null,
      parents: (git['parents'] as Json[]).map((p) => ({ ...p })),
      files: [],
      stats: { additions: 0, deletions: 0, total: 0 },
    };
  }

  contentFile(repo: RepoRec, path: string, ref: string, sha: string, content: Buffer): Json {
    const api = this.repoApi(repo);
    const html = `${this.base}/${repo.owner}/${repo.name}/blob/${ref}/${path}`;
    return {
      type: 'file',
      encoding: 'base64',
      size: content.length,
      name: path.split('/').pop() ?? path,
      path,
      content: content.toString('base64'),
      sha,
      url: `${api}/contents/${path}?ref=${encodeURIComponent(ref)}`,
      git_url: `${api}/git/blobs/${sha}`,
      html_url: html,
      download_url: `${this.base}/raw/${repo.owner}/${repo.name}/${ref}/${path}`,
      _links: { git: `${api}/git/blobs/${sha}`, self: `${api}/contents/${path}`, html },
    };
  }

  /** One entry of a directory listing (`GET /contents/{dir}`): no content. */
  contentEntry(
    repo: RepoRec,
    path: string,
    ref: string,
    type: 'file' | 'dir',
    sha: string,
    size: number,
  ): Json {
    const api = this.repoApi(repo);
    const kind = type === 'dir' ? 'tree' : 'blob';
    const html = `${this.base}/${repo.owner}/${repo.name}/${kind}/${ref}/${path}`;
    const git = `${api}/git/${kind === 'tree' ? 'trees' : 'blobs'}/${sha}`;
    return {
      type,
      size: type === 'dir' ? 0 : size,
      name: path.split('/').pop() ?? path,
      path,
      sha,
      url: `${api}/contents/${path}?ref=${encodeURIComponent(ref)}`,
      git_url: git,
      html_url: html,
      download_url:
        type === 'dir' ? null : `${this.base}/raw/${repo.owner}/${repo.name}/${ref}/${path}`,
      _links: { git, self: `${api}/contents/${path}`, html },
    };
  }

  fileCommit(
    repo: RepoRec,
    path: string,
    ref: string,
    blobSha: string,
    size: number,
    c: CommitInfo,
  ): Json {
    const api = this.repoApi(repo);
    const html = `${this.base}/${repo.owner}/${repo.name}/blob/${ref}/${path}`;
    return {
      content: {
        name: path.split('/').pop() ?? path,
        path,
        sha: blobSha,
        size,
        url: `${api}/contents/${path}?ref=${encodeURIComponent(ref)}`,
        html_url: html,
        git_url: `${api}/git/blobs/${blobSha}`,
        download_url: `${this.base}/raw/${repo.owner}/${repo.name}/${ref}/${path}`,
        type: 'file',
        _links: { self: `${api}/contents/${path}`, git: `${api}/git/blobs/${blobSha}`, html },
      },
      commit: this.gitCommit(repo, c),
    };
  }

  workflow(repo: RepoRec, id: number, path: string): Json {
    const api = this.repoApi(repo);
    return {
      id,
      node_id: Buffer.from(`workflow:${id}`).toString('base64'),
      name: path.split('/').pop() ?? path,
      path,
      state: 'active',
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      url: `${api}/actions/workflows/${id}`,
      html_url: `${this.base}/${repo.owner}/${repo.name}/blob/${repo.defaultBranch}/${path}`,
      badge_url: `${this.base}/${repo.owner}/${repo.name}/workflows/${path}/badge.svg`,
    };
  }

  workflowRun(
    repo: RepoRec,
    run: RunRec,
    actor: UserRec,
    repoJson: Json,
    /** The repository the run's code came from (a fork); default: the run's own. */
    headRepoJson: Json = repoJson,
  ): Json {
    const ex = this.example('workflow-run');
    const api = this.repoApi(repo);
    const html = `${this.base}/${repo.owner}/${repo.name}/actions/runs/${run.id}`;
    const minimal = minimalRepo(repoJson);
    return {
      ...ex,
      id: run.id,
      name: run.name,
      node_id: run.nodeId,
      check_suite_id: run.id,
      check_suite_node_id: Buffer.from(`suite:${run.id}`).toString('base64'),
      head_branch: run.headBranch,
      head_sha: run.headSha,
      path: run.workflowPath,
      display_title: run.displayTitle,
      run_number: run.id,
      run_attempt: 1,
      event: run.event,
      status: run.status,
      conclusion: run.conclusion,
      workflow_id: run.workflowId,
      url: `${api}/actions/runs/${run.id}`,
      html_url: html,
      pull_requests: [],
      created_at: run.createdAt,
      updated_at: run.updatedAt,
      run_started_at: run.createdAt,
      actor: this.user(actor),
      triggering_actor: this.user(actor),
      jobs_url: `${api}/actions/runs/${run.id}/jobs`,
      logs_url: `${api}/actions/runs/${run.id}/logs`,
      check_suite_url: `${api}/check-suites/${run.id}`,
      artifacts_url: `${api}/actions/runs/${run.id}/artifacts`,
      cancel_url: `${api}/actions/runs/${run.id}/cancel`,
      rerun_url: `${api}/actions/runs/${run.id}/rerun`,
      previous_attempt_url: null,
      workflow_url: `${api}/actions/workflows/${run.workflowId}`,
      head_commit: {
        id: run.headSha,
        tree_id: run.headSha,
        message: run.name,
        timestamp: run.createdAt,
        author: {
          name: actor.login,
          email: `${actor.id}+${actor.login.replace(/\[bot\]$/, '')}@users.noreply.example`,
        },
        committer: {
          name: actor.login,
          email: `${actor.id}+${actor.login.replace(/\[bot\]$/, '')}@users.noreply.example`,
        },
      },
      repository: minimal,
      head_repository: minimalRepo(headRepoJson),
      referenced_workflows: [],
    };
  }

  job(repo: RepoRec, run: RunRec, job: JobRec): Json {
    const ex = this.example('job');
    const api = this.repoApi(repo);
    return {
      ...ex,
      id: job.id,
      run_id: run.id,
      run_url: `${api}/actions/runs/${run.id}`,
      run_attempt: 1,
      node_id: Buffer.from(`job:${job.id}`).toString('base64'),
      head_sha: run.headSha,
      head_branch: run.headBranch,
      url: `${api}/actions/jobs/${job.id}`,
      html_url: `${this.base}/${repo.owner}/${repo.name}/actions/runs/${run.id}/job/${job.id}`,
      status: job.status,
      conclusion: job.conclusion,
      created_at: run.createdAt,
      started_at: job.startedAt,
      completed_at: job.completedAt,
      name: job.name,
      steps: [],
      check_run_url: `${api}/check-runs/${job.id}`,
      labels: ['ubuntu-latest'],
      runner_id: null,
      runner_name: null,
      runner_group_id: null,
      runner_group_name: null,
      workflow_name: run.name,
    };
  }

  app(app: AppRec, owner: UserRec): Json {
    return {
      ...this.example('integration'),
      id: app.id,
      slug: app.slug,
      node_id: app.nodeId,
      client_id: `Iv1.double${app.id}`,
      owner: this.user(owner),
      name: app.slug,
      html_url: `${this.base}/apps/${app.slug}`,
      permissions: {
        issues: 'write',
        pull_requests: 'write',
        contents: 'write',
        actions: 'write',
        metadata: 'read',
        organization_projects: 'write',
      },
      events: ['issues', 'issue_comment', 'workflow_run', 'sub_issues', 'pull_request_review'],
    };
  }

  /** The GitHub Actions App, which owns the check runs a `GITHUB_TOKEN` creates. */
  actionsApp(owner: UserRec): Json {
    return {
      ...this.example('integration'),
      id: 15368,
      slug: 'github-actions',
      node_id: 'MDM6QXBwMTUzNjg=',
      client_id: 'Iv1.github-actions',
      owner: this.user(owner),
      name: 'GitHub Actions',
      html_url: `${this.base}/apps/github-actions`,
    };
  }

  checkRun(repo: RepoRec, run: CheckRunRec, app: Json): Json {
    const api = this.repoApi(repo);
    return {
      id: run.id,
      head_sha: run.headSha,
      node_id: run.nodeId,
      external_id: run.externalId,
      url: `${api}/check-runs/${run.id}`,
      html_url: `${this.base}/${repo.owner}/${repo.name}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.conclusion,
      started_at: run.startedAt,
      completed_at: run.completedAt,
      output: {
        title: run.title,
        summary: run.summary,
        text: null,
        annotations_count: 0,
        annotations_url: `${api}/check-runs/${run.id}/annotations`,
      },
      name: run.name,
      check_suite: { id: run.id },
      app,
      pull_requests: [],
    };
  }

  commitStatus(repo: RepoRec, st: StatusRec, creator: UserRec): Json {
    return {
      url: `${this.repoApi(repo)}/statuses/${st.sha}`,
      avatar_url: `${this.base}/avatars/u/${creator.id}`,
      id: st.id,
      node_id: st.nodeId,
      state: st.state,
      description: st.description,
      target_url: st.targetUrl,
      context: st.context,
      created_at: st.createdAt,
      updated_at: st.createdAt,
      creator: this.user(creator),
    };
  }

  installation(app: AppRec, id: number, account: UserRec): Json {
    const ex = this.example('installation');
    return {
      ...ex,
      id,
      account: this.user(account),
      repository_selection: 'all',
      access_tokens_url: `${this.base}/app/installations/${id}/access_tokens`,
      repositories_url: `${this.base}/installation/repositories`,
      html_url: `${this.base}/settings/installations/${id}`,
      app_id: app.id,
      client_id: `Iv1.double${app.id}`,
      app_slug: app.slug,
      target_id: account.id,
      target_type: account.type === 'Organization' ? 'Organization' : 'User',
      permissions: {
        issues: 'write',
        pull_requests: 'write',
        contents: 'write',
        actions: 'write',
        metadata: 'read',
        organization_projects: 'write',
      },
      events: ['issues', 'issue_comment', 'workflow_run', 'sub_issues', 'pull_request_review'],
      suspended_by: null,
      suspended_at: null,
    };
  }
}

export function permissionFlags(p: Permission): Json {
  const rank = ['none', 'read', 'triage', 'write', 'maintain', 'admin'].indexOf(p);
  return {
    admin: rank >= 5,
    maintain: rank >= 4,
    push: rank >= 3,
    triage: rank >= 2,
    pull: rank >= 1,
  };
}

/** `permission` field of the collaborator-permission API: maintain→write, triage→read. */
export function legacyPermission(p: Permission): string {
  if (p === 'maintain') return 'write';
  if (p === 'triage') return 'read';
  return p;
}

export function authorAssociation(repo: RepoRec, u: UserRec): string {
  if (u.login.toLowerCase() === repo.owner.toLowerCase()) return 'OWNER';
  const p = repo.permissions.get(u.login.toLowerCase()) ?? u.permission;
  return p === 'none' || p === 'read' ? 'CONTRIBUTOR' : 'COLLABORATOR';
}

function countOpen(repo: RepoRec): number {
  let n = 0;
  for (const i of repo.issues.values()) if (i.state === 'open') n += 1;
  return n;
}

/** `minimal-repository` view of a full repository object. */
export function minimalRepo(full: Json): Json {
  const out: Json = { ...full };
  for (const k of ['organization', 'parent', 'source', 'template_repository', 'network_count'])
    delete out[k];
  return out;
}

function rewrite(value: unknown, base: string): unknown {
  if (typeof value === 'string') {
    return value
      .replace(/^https:\/\/api\.github\.com/, base)
      .replace(/^https:\/\/(github\.com|raw\.githubusercontent\.com)/, base);
  }
  if (Array.isArray(value)) return value.map((v) => rewrite(v, base));
  if (value !== null && typeof value === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = rewrite(v, base);
    return out;
  }
  return value;
}
