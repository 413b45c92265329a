/**
 * One repository as epicflow sees it on GitHub. Every write is an idempotent
 * "ensure": find the thing again by state (hidden marker plus the bot's own
 * login or the epic owner's, branch name, head branch), create it when missing,
 * change it only when it differs — so a redelivered webhook or a restarted App
 * never duplicates work.
 */
import type { Octokit } from '@octokit/rest';
import { EpicflowError } from '../../core/errors.js';
import { STORY_TRAILER, trailerValues } from '../../core/merge-message.js';
import { GitHubCache, type FolderEntry } from './cache.js';
import type { HeadCommit } from './epic-view.js';
import { attempt, githubError, statusOf } from './errors.js';
import { hasMarker, withMarkers } from './markers.js';

export type RepoPermission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

/** What epicflow needs of an Octokit: the REST methods, `request`, `paginate`, `graphql`. */
export type GitHubClient = Pick<Octokit, 'rest' | 'request' | 'paginate' | 'graphql'>;

export type EnsureAction = 'created' | 'updated' | 'unchanged';

export interface IssueSummary {
  readonly number: number;
  /** Database id (what the sub-issue and dependency endpoints take). */
  readonly id: number;
  readonly nodeId: string;
  readonly title: string;
  readonly body: string;
  readonly state: 'open' | 'closed';
  readonly author: string;
}

export type EnsurePrResult =
  | {
      readonly action: EnsureAction;
      readonly number: number;
      readonly nodeId: string;
      readonly draft: boolean;
      readonly url: string;
    }
  /** GitHub refuses a pull request without commits; retry once the epic branch moved. */
  | { readonly action: 'no-commits' };

export interface DispatchResult {
  /** null on GitHub versions that do not return run details (older GHES). */
  readonly runId: number | null;
  /** The run's page, for people. */
  readonly runUrl: string | null;
}

/** A workflow run as epicflow reads it: where it came from, its title and how far it got. */
export interface WorkflowRunSummary {
  readonly id: number;
  /** The event that started it (`workflow_dispatch`, `push`, `pull_request`, …). */
  readonly event: string;
  /** `.github/workflows/<file>`. */
  readonly path: string;
  readonly headBranch: string | null;
  /** Its evaluated `run-name`. */
  readonly displayTitle: string;
  /** `queued`, `in_progress`, `completed`, … */
  readonly status: string | null;
  readonly conclusion: string | null;
  readonly repository: { readonly id: number; readonly fullName: string } | null;
  /** Where its code came from: a fork, for a fork's pull request. */
  readonly headRepository: { readonly id: number; readonly fullName: string } | null;
}

interface RawRun {
  readonly id: number;
  readonly event: string;
  readonly path: string;
  readonly head_branch: string | null;
  readonly display_title: string;
  readonly status: string | null;
  readonly conclusion: string | null;
  readonly repository?: { readonly id: number; readonly full_name: string } | null;
  readonly head_repository?: { readonly id: number; readonly full_name: string } | null;
}

function runSummary(r: RawRun): WorkflowRunSummary {
  const repo = (x: RawRun['repository']): WorkflowRunSummary['repository'] =>
    x === undefined || x === null ? null : { id: x.id, fullName: x.full_name };
  return {
    id: r.id,
    event: r.event,
    path: r.path,
    headBranch: r.head_branch,
    displayTitle: r.display_title,
    status: r.status,
    conclusion: r.conclusion,
    repository: repo(r.repository),
    headRepository: repo(r.head_repository),
  };
}

/** Dispatch inputs are ids only: issue text never reaches a workflow (PRODUCT §11). */
export const DISPATCH_INPUT = /^[A-Za-z0-9._-]{1,100}$/;
const WORKFLOW_FILE = /^[A-Za-z0-9._-]+\.ya?ml$/;

export const CONFIG_PATH = '.github/epicflow.yml';

const ROLES: readonly RepoPermission[] = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];

/** Bots sign in as `name[bot]`; some APIs drop the suffix, so compare without it. */
function sameLogin(a: string | undefined, b: string): boolean {
  const norm = (s: string): string => s.toLowerCase().replace(/\[bot\]$/, '');
  return a !== undefined && norm(a) === norm(b);
}

interface RawIssue {
  readonly number: number;
  readonly id: number;
  readonly node_id: string;
  readonly title: string;
  readonly body?: string | null;
  readonly state: string;
  readonly user: { readonly login: string } | null;
  readonly pull_request?: unknown;
}

function summary(i: RawIssue): IssueSummary {
  return {
    number: i.number,
    id: i.id,
    nodeId: i.node_id,
    title: i.title,
    body: i.body ?? '',
    state: i.state === 'closed' ? 'closed' : 'open',
    author: i.user?.login ?? '',
  };
}

export interface GitHubRepoOptions {
  readonly owner: string;
  readonly repo: string;
  readonly octokit: GitHubClient;
  /** The login our own comments and issues carry, e.g. `epicflow[bot]`. */
  readonly botLogin: string;
  /** What a long-lived process remembers between events (default: nothing). */
  readonly cache?: GitHubCache;
  /**
   * Other logins whose marked comments and sub-issues count as ours: the epic's owner
   * when another identity opened the epic (the App, while story jobs act as
   * github-actions[bot]). Anyone else's marker is never trusted.
   */
  readonly peers?: readonly string[];
}

/** Every `<!-- epicflow:<name> -->` in a body. */
function markerNames(body: string): string[] {
  return [...body.matchAll(/<!-- epicflow:([A-Za-z0-9][A-Za-z0-9:._=/-]*) -->/g)].map(
    (m) => m[1] ?? '',
  );
}

export class GitHubRepo {
  readonly owner: string;
  readonly repo: string;
  readonly octokit: GitHubClient;
  readonly botLogin: string;
  readonly cache: GitHubCache;
  readonly peers: readonly string[];

  constructor(options: GitHubRepoOptions) {
    this.owner = options.owner;
    this.repo = options.repo;
    this.octokit = options.octokit;
    this.botLogin = options.botLogin;
    this.cache = options.cache ?? new GitHubCache();
    this.peers = options.peers ?? [];
  }

  /**
   * The same repository (client and cache shared) that also recognises `login`'s marked
   * comments and sub-issues as its own; itself when `login` is unset or already ours.
   */
  withPeer(login: string | undefined): GitHubRepo {
    if (login === undefined || this.isOurs(login)) return this;
    return new GitHubRepo({
      owner: this.owner,
      repo: this.repo,
      octokit: this.octokit,
      botLogin: this.botLogin,
      cache: this.cache,
      peers: [...this.peers, login],
    });
  }

  /** Whether `login` wrote as epicflow here: our own login or a peer's. */
  isOurs(login: string | undefined): boolean {
    return sameLogin(login, this.botLogin) || this.peers.some((p) => sameLogin(login, p));
  }

  get fullName(): string {
    return `${this.owner}/${this.repo}`;
  }

  /**
   * The repository's web address (`https://github.com/<o>/<r>`), derived from the API
   * address: `api.github.com` serves github.com, `<host>/api/v3` serves a GHES `<host>`.
   */
  get htmlUrl(): string {
    const api = this.octokit.request.endpoint.DEFAULTS.baseUrl.replace(/\/+$/, '');
    const server =
      api === 'https://api.github.com' ? 'https://github.com' : api.replace(/\/api\/v3$/, '');
    return `${server}/${this.owner}/${this.repo}`;
  }

  private get base(): { owner: string; repo: string } {
    return { owner: this.owner, repo: this.repo };
  }

  // ------------------------------------------------------------ permissions

  /** The user's role on this repository; `none` for unknown users and outsiders. */
  async permissionOf(login: string): Promise<RepoPermission> {
    try {
      const { data } = await this.octokit.rest.repos.getCollaboratorPermissionLevel({
        ...this.base,
        username: login,
      });
      // `role_name` is exact (maintain, triage); custom roles fall back to the legacy field.
      const role = ROLES.find((r) => r === data.role_name);
      return role ?? ROLES.find((r) => r === data.permission) ?? 'none';
    } catch (e) {
      if (statusOf(e) === 404) return 'none';
      throw githubError(`read the permission of ${login} on ${this.fullName}`, e, 'Metadata: read');
    }
  }

  /** Write, maintain or admin: who may start, resume or steer an epic. */
  async canWrite(login: string): Promise<boolean> {
    const p = await this.permissionOf(login);
    return p === 'write' || p === 'maintain' || p === 'admin';
  }

  // ------------------------------------------------------------ comments

  /**
   * The latest listing of each issue's comments by this port: our marked comments
   * in it, and the markers asked about since. A listing answers once for each
   * marker (one decision asks about several: the status, an error, the
   * violations), so a second marker costs no request; asked again, a marker is
   * looked up anew (a person may have deleted the comment since).
   */
  private readonly listings = new Map<
    number,
    { readonly found: Map<string, { id: number; body: string }>; readonly asked: Set<string> }
  >();

  private commentKey(issueNumber: number, markerName: string): string {
    return `${this.fullName}#${issueNumber}:${markerName}`;
  }

  /** Our marked comment as just written, wherever it is remembered. */
  private rememberComment(
    issueNumber: number,
    markerName: string,
    comment: { id: number; body: string },
  ): void {
    this.cache.comments.set(this.commentKey(issueNumber, markerName), comment);
    this.listings.get(issueNumber)?.found.set(markerName, comment);
  }

  /** A comment found gone (deleted by someone): forgotten wherever it is remembered. */
  private forgetComment(issueNumber: number, markerName: string, id: number): void {
    this.cache.comments.delete(this.commentKey(issueNumber, markerName));
    const found = this.listings.get(issueNumber)?.found;
    if (found?.get(markerName)?.id === id) found.delete(markerName);
  }

  /**
   * Our comment carrying the marker (author = the bot or a peer: users cannot hijack a marker).
   * A marker not yet asked about since this port listed the issue is answered from
   * that listing; a comment remembered from an earlier event is checked with one
   * read of it; the comments of the issue are listed only when it is unknown or gone.
   */
  async findComment(
    issueNumber: number,
    markerName: string,
  ): Promise<{ id: number; body: string } | null> {
    const listing = this.listings.get(issueNumber);
    if (listing !== undefined && !listing.asked.has(markerName)) {
      listing.asked.add(markerName);
      return listing.found.get(markerName) ?? null;
    }
    const key = this.commentKey(issueNumber, markerName);
    const known = this.cache.comments.get(key);
    if (known !== undefined) {
      const current = await this.readComment(known.id);
      if (current !== null && hasMarker(current.body, markerName)) {
        this.cache.comments.set(key, current);
        return current;
      }
      this.cache.comments.delete(key);
    }
    return this.listForMarker(issueNumber, markerName);
  }

  /** One comment of ours by id; null when it was deleted (or is not ours: remembered for a peer). */
  private async readComment(id: number): Promise<{ id: number; body: string } | null> {
    try {
      const { data } = await this.octokit.rest.issues.getComment({ ...this.base, comment_id: id });
      return this.isOurs(data.user?.login) ? { id: data.id, body: data.body ?? '' } : null;
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(`read comment ${id} in ${this.fullName}`, e, 'Issues: read and write');
    }
  }

  /** Lists the issue's comments, remembering every marked comment of ours on it. */
  private async listForMarker(
    issueNumber: number,
    markerName: string,
  ): Promise<{ id: number; body: string } | null> {
    const comments = await attempt(
      `list the comments of ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.issues.listComments, {
          ...this.base,
          issue_number: issueNumber,
          per_page: 100,
        }),
    );
    const found = new Map<string, { id: number; body: string }>();
    for (const c of comments) {
      if (!this.isOurs(c.user?.login)) continue;
      const body = c.body ?? '';
      for (const name of markerNames(body)) {
        // The first comment per marker is the one epicflow keeps.
        if (found.has(name)) continue;
        found.set(name, { id: c.id, body });
        this.cache.comments.set(this.commentKey(issueNumber, name), { id: c.id, body });
      }
    }
    // "No such comment" is remembered for this listing only: another instance of the
    // App may create it meanwhile.
    this.listings.set(issueNumber, { found, asked: new Set([markerName]) });
    return found.get(markerName) ?? null;
  }

  /**
   * One comment per marker, updated in place. `fullTextUrl` is linked when the body
   * has to be truncated to GitHub's limit.
   */
  async ensureComment(input: {
    issueNumber: number;
    marker: string;
    body: string;
    fullTextUrl?: string;
  }): Promise<{ id: number; action: EnsureAction }> {
    const body = withMarkers(input.body, [input.marker], input.fullTextUrl);
    const where = `${this.fullName}#${input.issueNumber}`;
    const known = this.cache.comments.get(this.commentKey(input.issueNumber, input.marker));
    // A remembered comment whose body changes is written straight away (the write
    // itself tells when the comment is gone); an unchanged one is checked by `findComment`.
    if (known !== undefined && known.body !== body) {
      const updated = await this.updateComment(input.issueNumber, known.id, body, input.marker);
      if (updated) return { id: known.id, action: 'updated' };
    }
    const existing = await this.findComment(input.issueNumber, input.marker);
    if (existing && existing.body === body) return { id: existing.id, action: 'unchanged' };
    if (existing) {
      if (await this.updateComment(input.issueNumber, existing.id, body, input.marker)) {
        return { id: existing.id, action: 'updated' };
      }
    }
    const { data } = await attempt(
      `create the ${input.marker} comment on ${where}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.createComment({
          ...this.base,
          issue_number: input.issueNumber,
          body,
        }),
    );
    this.rememberComment(input.issueNumber, input.marker, { id: data.id, body });
    return { id: data.id, action: 'created' };
  }

  /** Writes a comment's body; false (and forgotten) when the comment no longer exists. */
  private async updateComment(
    issueNumber: number,
    id: number,
    body: string,
    markerName: string,
  ): Promise<boolean> {
    try {
      await this.octokit.rest.issues.updateComment({ ...this.base, comment_id: id, body });
    } catch (e) {
      if (statusOf(e) === 404) {
        this.forgetComment(issueNumber, markerName, id);
        return false;
      }
      throw githubError(
        `update the ${markerName} comment on ${this.fullName}#${issueNumber}`,
        e,
        'Issues: read and write',
      );
    }
    this.rememberComment(issueNumber, markerName, { id, body });
    return true;
  }

  /** A plain reply (e.g. why a command was ignored). */
  async reply(issueNumber: number, body: string): Promise<number> {
    const { data } = await attempt(
      `comment on ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.createComment({
          ...this.base,
          issue_number: issueNumber,
          body: withMarkers(body, []),
        }),
    );
    return data.id;
  }

  // ------------------------------------------------------------ issues and sub-issues

  async getIssue(issueNumber: number): Promise<IssueSummary> {
    const { data } = await attempt(
      `read ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () => this.octokit.rest.issues.get({ ...this.base, issue_number: issueNumber }),
    );
    return summary(data);
  }

  async listSubIssues(parent: number): Promise<IssueSummary[]> {
    const subs = await attempt(
      `list the sub-issues of ${this.fullName}#${parent}`,
      'Issues: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.issues.listSubIssues, {
          ...this.base,
          issue_number: parent,
          per_page: 100,
        }),
    );
    return subs.map(summary);
  }

  /** Issues that block this one (GitHub's issue dependencies). */
  async blockedBy(issueNumber: number): Promise<IssueSummary[]> {
    const list = await attempt(
      `list the issues blocking ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.issues.listDependenciesBlockedBy, {
          ...this.base,
          issue_number: issueNumber,
          per_page: 100,
        }),
    );
    return list.map(summary);
  }

  /**
   * The story's sub-issue of `parent`, found by its marker: created and linked when
   * missing, its title and body brought up to date when they differ. An issue we
   * created whose link was lost (crash between the two calls) is linked, not duplicated.
   */
  async ensureSubIssue(input: {
    parent: number;
    storyId: string;
    title: string;
    body: string;
    /**
     * What the caller already read in this decision, sparing a request per story: the
     * parent's sub-issues, and (lazily, shared by the stories) our recent issues.
     */
    known?: {
      readonly subIssues: readonly IssueSummary[];
      readonly recent: () => Promise<readonly IssueSummary[]>;
    };
  }): Promise<IssueSummary & { action: EnsureAction | 'linked' }> {
    const storyMarker = `story:${input.storyId}`;
    const epicMarker = `epic:${input.parent}`;
    const body = withMarkers(input.body, [storyMarker, epicMarker]);
    const ours = (i: IssueSummary): boolean =>
      this.isOurs(i.author) && hasMarker(i.body, storyMarker);

    const subs = input.known?.subIssues ?? (await this.listSubIssues(input.parent));
    const linked = subs.find(ours);
    if (linked) return this.syncIssue(linked, input.title, body);

    const recent = await (input.known?.recent ?? (() => this.recentIssues()))();
    const orphan = recent.find((i) => ours(i) && hasMarker(i.body, epicMarker)) ?? null;
    const issue =
      orphan ??
      (await this.createIssue(
        input.title,
        body,
        `create the sub-issue for story ${input.storyId} of ${this.fullName}#${input.parent}`,
      ));
    await attempt(
      `add #${issue.number} as a sub-issue of ${this.fullName}#${input.parent}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.addSubIssue({
          ...this.base,
          issue_number: input.parent,
          sub_issue_id: issue.id,
        }),
    );
    if (!orphan) return { ...issue, action: 'created' };
    const synced = await this.syncIssue(orphan, input.title, body);
    return { ...synced, action: 'linked' };
  }

  private async createIssue(title: string, body: string, action: string): Promise<IssueSummary> {
    const { data } = await attempt(action, 'Issues: read and write', () =>
      this.octokit.rest.issues.create({ ...this.base, title, body }),
    );
    return summary(data);
  }

  /** Our 100 most recent issues (a crash can leave one created but not linked). */
  async recentIssues(): Promise<IssueSummary[]> {
    const { data } = await attempt(
      `list recent issues of ${this.botLogin} in ${this.fullName}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.listForRepo({
          ...this.base,
          creator: this.botLogin,
          state: 'all',
          sort: 'created',
          direction: 'desc',
          per_page: 100,
        }),
    );
    return data.filter((i) => i.pull_request === undefined).map(summary);
  }

  private async syncIssue(
    issue: IssueSummary,
    title: string,
    body: string,
  ): Promise<IssueSummary & { action: EnsureAction }> {
    if (issue.title === title && issue.body === body) return { ...issue, action: 'unchanged' };
    await attempt(`update ${this.fullName}#${issue.number}`, 'Issues: read and write', () =>
      this.octokit.rest.issues.update({ ...this.base, issue_number: issue.number, title, body }),
    );
    return { ...issue, title, body, action: 'updated' };
  }

  /**
   * Closes the issue unless it is closed already; true when it changed. `known` is its
   * state as the caller just read it (spares the read).
   */
  closeIssue(issueNumber: number, known?: 'open' | 'closed'): Promise<boolean> {
    return this.setIssueState(issueNumber, 'closed', known);
  }

  reopenIssue(issueNumber: number, known?: 'open' | 'closed'): Promise<boolean> {
    return this.setIssueState(issueNumber, 'open', known);
  }

  private async setIssueState(
    issueNumber: number,
    state: 'open' | 'closed',
    known: 'open' | 'closed' | undefined,
  ): Promise<boolean> {
    const current = known ?? (await this.getIssue(issueNumber)).state;
    if (current === state) return false;
    await attempt(
      `${state === 'closed' ? 'close' : 'reopen'} ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.update({
          ...this.base,
          issue_number: issueNumber,
          state,
          ...(state === 'closed' ? { state_reason: 'completed' as const } : {}),
        }),
    );
    return true;
  }

  // ------------------------------------------------------------ branches and files

  async defaultBranch(): Promise<string> {
    const { data } = await attempt(`read ${this.fullName}`, 'Metadata: read', () =>
      this.octokit.rest.repos.get(this.base),
    );
    return data.default_branch;
  }

  /** The commit a branch points at; null when the branch does not exist. */
  async getBranchSha(name: string): Promise<string | null> {
    try {
      const { data } = await this.octokit.rest.git.getRef({ ...this.base, ref: `heads/${name}` });
      return data.object.sha;
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(`read branch ${name} of ${this.fullName}`, e, 'Contents: read');
    }
  }

  /** Creates the branch at `fromSha` unless it exists (then it is left where it is). */
  async ensureBranch(
    name: string,
    fromSha: string,
  ): Promise<{ sha: string; action: 'created' | 'unchanged' }> {
    const existing = await this.getBranchSha(name);
    if (existing) return { sha: existing, action: 'unchanged' };
    return this.createBranch(name, fromSha);
  }

  /** Creates a branch believed missing; when someone created it meanwhile, theirs stands. */
  async createBranch(
    name: string,
    fromSha: string,
  ): Promise<{ sha: string; action: 'created' | 'unchanged' }> {
    try {
      await this.octokit.rest.git.createRef({
        ...this.base,
        ref: `refs/heads/${name}`,
        sha: fromSha,
      });
      return { sha: fromSha, action: 'created' };
    } catch (e) {
      // Someone created it between our read and our write: theirs stands.
      const now = statusOf(e) === 422 ? await this.getBranchSha(name) : null;
      if (now) return { sha: now, action: 'unchanged' };
      throw githubError(
        `create branch ${name} at ${fromSha} in ${this.fullName}`,
        e,
        'Contents: read and write',
      );
    }
  }

  /**
   * The branch, created when missing with one empty commit on top of `fromBranch`
   * (GitHub refuses a pull request without commits between head and base, so the
   * start commit lets the epic's draft pull request open right away).
   */
  async ensureBranchWithCommit(input: {
    name: string;
    fromBranch: string;
    message: string;
    /** The caller just read that the branch does not exist (spares a read). */
    missing?: boolean;
  }): Promise<{ sha: string; action: 'created' | 'unchanged' }> {
    const existing = input.missing === true ? null : await this.getBranchSha(input.name);
    if (existing) return { sha: existing, action: 'unchanged' };
    const head = await this.getBranchSha(input.fromBranch);
    if (head === null) {
      throw new EpicflowError(
        'github',
        `GitHub: ${this.fullName} has no commit on ${input.fromBranch} to start ${input.name} from`,
      );
    }
    const where = `${input.name} in ${this.fullName}`;
    const { data: parent } = await attempt(
      `read commit ${head} of ${where}`,
      'Contents: read',
      () => this.octokit.rest.git.getCommit({ ...this.base, commit_sha: head }),
    );
    const { data: commit } = await attempt(
      `write the start commit of ${where}`,
      'Contents: read and write',
      () =>
        this.octokit.rest.git.createCommit({
          ...this.base,
          message: input.message,
          tree: parent.tree.sha,
          parents: [head],
        }),
    );
    // Nothing is merged below a start commit: a later merge walk stops here without a read.
    this.cache.merged.set(`:${commit.sha}`, new Map());
    return this.createBranch(input.name, commit.sha);
  }

  /** Entries of a folder at `ref` (one request); null when the folder or the ref is missing. */
  async listFolder(ref: string, path: string): Promise<FolderEntry[] | null> {
    let data: unknown;
    try {
      ({ data } = await this.octokit.rest.repos.getContent({ ...this.base, path, ref }));
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(`list ${path} at ${ref} in ${this.fullName}`, e, 'Contents: read');
    }
    if (!Array.isArray(data)) {
      throw new EpicflowError('github', `${this.fullName}: ${path} at ${ref} is not a folder`);
    }
    return (data as { type?: string; name?: string; sha?: string }[]).flatMap((e) =>
      (e.type === 'file' || e.type === 'dir') && e.name !== undefined && e.sha !== undefined
        ? [{ name: e.name, type: e.type, sha: e.sha }]
        : [],
    );
  }

  /** A tree's entries by tree sha (remembered: a sha names one content forever). */
  async readTree(sha: string): Promise<readonly FolderEntry[]> {
    const cached = this.cache.trees.get(sha);
    if (cached !== undefined) return cached;
    const { data } = await attempt(`read tree ${sha} of ${this.fullName}`, 'Contents: read', () =>
      this.octokit.rest.git.getTree({ ...this.base, tree_sha: sha }),
    );
    const entries = data.tree.flatMap((e): FolderEntry[] =>
      (e.type === 'blob' || e.type === 'tree') && e.path !== undefined && e.sha !== undefined
        ? [{ name: e.path, type: e.type === 'tree' ? 'dir' : 'file', sha: e.sha }]
        : [],
    );
    this.cache.trees.set(sha, entries);
    return entries;
  }

  /** A blob's text by sha (remembered). */
  async readBlob(sha: string): Promise<string> {
    const cached = this.cache.blobs.get(sha);
    if (cached !== undefined) return cached;
    const { data } = await attempt(`read blob ${sha} of ${this.fullName}`, 'Contents: read', () =>
      this.octokit.rest.git.getBlob({ ...this.base, file_sha: sha }),
    );
    const text =
      data.encoding === 'base64'
        ? Buffer.from(data.content, 'base64').toString('utf8')
        : data.content;
    this.cache.blobs.set(sha, text);
    return text;
  }

  /** A file's text at `ref` (default branch when omitted); null when missing. */
  async readFile(ref: string | undefined, path: string): Promise<string | null> {
    const file = await this.readFileWithSha(ref, path);
    return file?.text ?? null;
  }

  /** A file's text and blob sha (the compare-and-swap token of the contents API). */
  async readFileWithSha(
    ref: string | undefined,
    path: string,
  ): Promise<{ text: string; sha: string } | null> {
    let data: unknown;
    try {
      ({ data } = await this.octokit.rest.repos.getContent({
        ...this.base,
        path,
        ...(ref === undefined ? {} : { ref }),
      }));
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(
        `read ${path}${ref ? ` at ${ref}` : ''} in ${this.fullName}`,
        e,
        'Contents: read',
      );
    }
    const file = data as { type?: string; content?: string; encoding?: string; sha?: string };
    if (Array.isArray(data) || file.type !== 'file' || typeof file.sha !== 'string') {
      throw new EpicflowError('github', `${this.fullName}: ${path} is not a file`);
    }
    const text =
      file.encoding === 'base64'
        ? Buffer.from(file.content ?? '', 'base64').toString('utf8')
        : (file.content ?? '');
    return { text, sha: file.sha };
  }

  /** `.github/epicflow.yml` on the default branch; null when the repository has none. */
  loadConfigText(): Promise<string | null> {
    return this.readFile(undefined, CONFIG_PATH);
  }

  // ------------------------------------------------------------ pull requests

  /** The open pull request from `head` (a branch of this repository) into `base`. */
  async findOpenPr(head: string, base: string) {
    const { data } = await attempt(
      `list pull requests from ${head} in ${this.fullName}`,
      'Pull requests: read and write',
      () =>
        this.octokit.rest.pulls.list({
          ...this.base,
          head: `${this.owner}:${head}`,
          base,
          state: 'open',
          per_page: 100,
        }),
    );
    return data[0] ?? null;
  }

  /** The epic's draft pull request, found by its head branch; title and body kept current. */
  async ensureDraftPr(input: {
    head: string;
    base: string;
    title: string;
    body: string;
    /** The caller just read that no pull request is open (spares a read). */
    missing?: boolean;
  }): Promise<EnsurePrResult> {
    const where = `the pull request ${input.head} → ${input.base} in ${this.fullName}`;
    const existing = input.missing === true ? null : await this.findOpenPr(input.head, input.base);
    if (existing) {
      const result = {
        number: existing.number,
        nodeId: existing.node_id,
        draft: existing.draft === true,
        url: existing.html_url,
      };
      if (existing.title === input.title && (existing.body ?? '') === input.body)
        return { ...result, action: 'unchanged' };
      await attempt(`update ${where}`, 'Pull requests: read and write', () =>
        this.octokit.rest.pulls.update({
          ...this.base,
          pull_number: existing.number,
          title: input.title,
          body: input.body,
        }),
      );
      return { ...result, action: 'updated' };
    }
    try {
      const { data } = await this.octokit.rest.pulls.create({
        ...this.base,
        head: input.head,
        base: input.base,
        title: input.title,
        body: input.body,
        draft: true,
      });
      return {
        action: 'created',
        number: data.number,
        nodeId: data.node_id,
        draft: data.draft === true,
        url: data.html_url,
      };
    } catch (e) {
      const message = String(
        (e as { response?: { data?: { message?: unknown } } }).response?.data?.message ?? '',
      );
      if (statusOf(e) === 422 && /no commits between/i.test(message))
        return { action: 'no-commits' };
      if (statusOf(e) === 422 && /already exists/i.test(message)) {
        const raced = await this.findOpenPr(input.head, input.base);
        if (raced)
          return {
            action: 'unchanged',
            number: raced.number,
            nodeId: raced.node_id,
            draft: raced.draft === true,
            url: raced.html_url,
          };
      }
      throw githubError(`create ${where}`, e, 'Pull requests: read and write');
    }
  }

  /** Marks a draft ready for review (GraphQL only); false when it was not a draft. */
  async markReadyForReview(
    prNumber: number,
    /** The pull request's node id, when the caller just read it as a draft (spares a read). */
    knownDraftNodeId?: string,
  ): Promise<boolean> {
    const where = `${this.fullName}#${prNumber}`;
    const data =
      knownDraftNodeId !== undefined
        ? { draft: true, node_id: knownDraftNodeId }
        : (
            await attempt(`read pull request ${where}`, 'Pull requests: read and write', () =>
              this.octokit.rest.pulls.get({ ...this.base, pull_number: prNumber }),
            )
          ).data;
    if (data.draft !== true) return false;
    await attempt(`mark ${where} ready for review`, 'Pull requests: read and write', () =>
      this.octokit.graphql(
        `mutation MarkReady($id: ID!) {
          markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } }
        }`,
        { id: data.node_id },
      ),
    );
    return true;
  }

  // ------------------------------------------------------------ Actions

  /**
   * Starts one story job. Inputs are ids only; anything else is refused before any
   * request, so issue text can never reach a workflow through them.
   */
  async dispatchWorkflow(input: {
    workflow: string;
    ref: string;
    inputs: Readonly<Record<string, string | number>>;
  }): Promise<DispatchResult> {
    if (!WORKFLOW_FILE.test(input.workflow)) {
      throw new EpicflowError(
        'internal',
        `refusing to dispatch ${JSON.stringify(input.workflow)}: not a workflow file name`,
      );
    }
    const inputs: Record<string, string> = {};
    for (const [key, value] of Object.entries(input.inputs)) {
      const text = String(value);
      if (!DISPATCH_INPUT.test(key) || !DISPATCH_INPUT.test(text)) {
        throw new EpicflowError(
          'internal',
          `refusing to dispatch ${input.workflow}: input ${JSON.stringify(key)} must be an id ` +
            `matching ${DISPATCH_INPUT.source} (issue text never goes into dispatch inputs)`,
        );
      }
      inputs[key] = text;
    }
    const { data, status } = await attempt(
      `dispatch ${input.workflow} on ${input.ref} in ${this.fullName}`,
      'Actions: read and write',
      () =>
        this.octokit.rest.actions.createWorkflowDispatch({
          ...this.base,
          workflow_id: input.workflow,
          ref: input.ref,
          inputs,
          return_run_details: true,
        }),
    );
    const details = ((status as number) === 200 ? (data as unknown) : undefined) as
      { workflow_run_id?: number; html_url?: string } | undefined;
    return { runId: details?.workflow_run_id ?? null, runUrl: details?.html_url ?? null };
  }

  /** One workflow run of this repository, as the API describes it. */
  async workflowRun(runId: number): Promise<WorkflowRunSummary> {
    const { data } = await attempt(
      `read workflow run ${runId} of ${this.fullName}`,
      'Actions: read and write',
      () => this.octokit.rest.actions.getWorkflowRun({ ...this.base, run_id: runId }),
    );
    return runSummary(data);
  }

  /**
   * Runs of one workflow, newest first, created since `createdSince` (ISO time):
   * one page of up to 100, with the total GitHub counted, so the caller knows
   * whether the page holds them all.
   */
  async workflowRuns(input: {
    readonly workflow: string;
    readonly event: string;
    readonly branch: string;
    readonly createdSince: string;
  }): Promise<{ readonly total: number; readonly runs: readonly WorkflowRunSummary[] }> {
    if (!WORKFLOW_FILE.test(input.workflow)) {
      throw new EpicflowError(
        'internal',
        `refusing to list runs of ${JSON.stringify(input.workflow)}: not a workflow file name`,
      );
    }
    const { data } = await attempt(
      `list the runs of ${input.workflow} in ${this.fullName}`,
      'Actions: read and write',
      () =>
        this.octokit.rest.actions.listWorkflowRuns({
          ...this.base,
          workflow_id: input.workflow,
          event: input.event,
          branch: input.branch,
          created: `>=${input.createdSince}`,
          per_page: 100,
        }),
    );
    return { total: data.total_count, runs: data.workflow_runs.map(runSummary) };
  }

  // ------------------------------------------------------------ merged stories

  /**
   * Story id → merge commit, from merge commits with an `Epicflow-Story` trailer on the
   * epic branch's first-parent history, read through the git data API (no clone: the
   * App may run serverless without git). The walk stops at `base` (the commit the epic
   * branch started from) or, without it, at the first commit that is not a story merge —
   * only epicflow moves the epic branch, so that commit is where the branch began.
   */
  async mergedStories(
    epicBranch: string,
    options: {
      base?: string;
      maxCommits?: number;
      /** The branch head as the caller just read it (null: no branch), sparing two reads. */
      head?: HeadCommit | null;
    } = {},
  ): Promise<Map<string, string>> {
    const given = options.head;
    const head = given === undefined ? await this.getBranchSha(epicBranch) : (given?.sha ?? null);
    if (head === null) return new Map();
    // What lies below a commit never changes: walk only the commits new since the last
    // decision, then take the rest from the walk remembered at the first known one.
    const key = (sha: string): string => `${options.base ?? ''}:${sha}`;
    const cached = this.cache.merged.get(key(head));
    if (cached !== undefined) return new Map(cached);
    const walked: { sha: string; stories: string[] }[] = [];
    let below: ReadonlyMap<string, string> = new Map();
    let sha: string | null = head;
    const max = options.maxCommits ?? 1000;
    for (let seen = 0; sha !== null && sha !== options.base; seen++) {
      const known = this.cache.merged.get(key(sha));
      if (known !== undefined) {
        below = known;
        break;
      }
      if (seen >= max) {
        throw new EpicflowError(
          'github',
          `GitHub: ${epicBranch} in ${this.fullName} has more than ${max} first-parent commits ` +
            'without reaching its base; is it really an epic branch?',
        );
      }
      const at: string = sha;
      const data =
        given != null && given.sha === at
          ? { message: given.message, parents: given.parents.map((p) => ({ sha: p })) }
          : (
              await attempt(
                `read commit ${at} of ${epicBranch} in ${this.fullName}`,
                'Contents: read',
                () => this.octokit.rest.git.getCommit({ ...this.base, commit_sha: at }),
              )
            ).data;
      const stories = data.parents.length > 1 ? trailerValues(data.message, STORY_TRAILER) : [];
      if (stories.length === 0 && options.base === undefined) {
        // Where the branch began: nothing merged below it, now or ever.
        this.cache.merged.set(key(at), new Map());
        break;
      }
      walked.push({ sha: at, stories });
      sha = data.parents[0]?.sha ?? null;
    }
    // Oldest first, so each commit's map is remembered and the newest merge of a story wins.
    let merged = new Map(below);
    for (const { sha: at, stories } of walked.reverse()) {
      merged = new Map(merged);
      for (const story of stories) merged.set(story, at);
      this.cache.merged.set(key(at), merged);
    }
    return new Map(merged);
  }
}
