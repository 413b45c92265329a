/**
 * One repository as epicflow sees it on GitHub. Every write is an idempotent
 * "ensure": find the thing again by state (hidden marker plus the bot's own
 * login, branch name, head branch), create it when missing, change it only when
 * it differs — so a redelivered webhook or a restarted App never duplicates work.
 */
import type { Octokit } from '@octokit/rest';
import { EpicflowError } from '../../core/errors.js';
import { STORY_TRAILER } from '../git/merge-message.js';
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

/** Values of `key:` trailers in the last paragraph of a commit message. */
export function trailerValues(message: string, key: string): string[] {
  const paragraphs = message.trim().split(/\n\s*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? '';
  const prefix = `${key.toLowerCase()}:`;
  return last
    .split('\n')
    .filter((line) => line.toLowerCase().startsWith(prefix))
    .map((line) => line.slice(prefix.length).trim())
    .filter((v) => v !== '');
}

export interface GitHubRepoOptions {
  readonly owner: string;
  readonly repo: string;
  readonly octokit: GitHubClient;
  /** The login our own comments and issues carry, e.g. `epicflow[bot]`. */
  readonly botLogin: string;
}

export class GitHubRepo {
  readonly owner: string;
  readonly repo: string;
  readonly octokit: GitHubClient;
  readonly botLogin: string;

  constructor(options: GitHubRepoOptions) {
    this.owner = options.owner;
    this.repo = options.repo;
    this.octokit = options.octokit;
    this.botLogin = options.botLogin;
  }

  get fullName(): string {
    return `${this.owner}/${this.repo}`;
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

  /** Our comment carrying the marker (author = the bot: users cannot hijack a marker). */
  async findComment(
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
    const mine = comments.find(
      (c) => sameLogin(c.user?.login, this.botLogin) && hasMarker(c.body, markerName),
    );
    return mine ? { id: mine.id, body: mine.body ?? '' } : null;
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
    const existing = await this.findComment(input.issueNumber, input.marker);
    if (existing && existing.body === body) return { id: existing.id, action: 'unchanged' };
    if (existing) {
      await attempt(
        `update the ${input.marker} comment on ${where}`,
        'Issues: read and write',
        () =>
          this.octokit.rest.issues.updateComment({ ...this.base, comment_id: existing.id, body }),
      );
      return { id: existing.id, action: 'updated' };
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
    return { id: data.id, action: 'created' };
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
  }): Promise<IssueSummary & { action: EnsureAction | 'linked' }> {
    const storyMarker = `story:${input.storyId}`;
    const epicMarker = `epic:${input.parent}`;
    const body = withMarkers(input.body, [storyMarker, epicMarker]);
    const ours = (i: IssueSummary): boolean =>
      sameLogin(i.author, this.botLogin) && hasMarker(i.body, storyMarker);

    const linked = (await this.listSubIssues(input.parent)).find(ours);
    if (linked) return this.syncIssue(linked, input.title, body);

    const orphan = await this.findOrphan((i) => ours(i) && hasMarker(i.body, epicMarker));
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

  /** Recent issues of ours that match (a crash can leave one created but not linked). */
  private async findOrphan(match: (i: IssueSummary) => boolean): Promise<IssueSummary | null> {
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
    const found = data
      .filter((i) => i.pull_request === undefined)
      .map(summary)
      .find(match);
    return found ?? null;
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

  /** Closes the issue unless it is closed already; true when it changed. */
  closeIssue(issueNumber: number): Promise<boolean> {
    return this.setIssueState(issueNumber, 'closed');
  }

  reopenIssue(issueNumber: number): Promise<boolean> {
    return this.setIssueState(issueNumber, 'open');
  }

  private async setIssueState(issueNumber: number, state: 'open' | 'closed'): Promise<boolean> {
    const issue = await this.getIssue(issueNumber);
    if (issue.state === state) return false;
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
  }): Promise<EnsurePrResult> {
    const where = `the pull request ${input.head} → ${input.base} in ${this.fullName}`;
    const existing = await this.findOpenPr(input.head, input.base);
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
  async markReadyForReview(prNumber: number): Promise<boolean> {
    const where = `${this.fullName}#${prNumber}`;
    const { data } = await attempt(
      `read pull request ${where}`,
      'Pull requests: read and write',
      () => this.octokit.rest.pulls.get({ ...this.base, pull_number: prNumber }),
    );
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
    options: { base?: string; maxCommits?: number } = {},
  ): Promise<Map<string, string>> {
    const merged = new Map<string, string>();
    let sha = await this.getBranchSha(epicBranch);
    const max = options.maxCommits ?? 1000;
    for (let seen = 0; sha !== null && sha !== options.base; seen++) {
      if (seen >= max) {
        throw new EpicflowError(
          'github',
          `GitHub: ${epicBranch} in ${this.fullName} has more than ${max} first-parent commits ` +
            'without reaching its base; is it really an epic branch?',
        );
      }
      const at = sha;
      const { data } = await attempt(
        `read commit ${at} of ${epicBranch} in ${this.fullName}`,
        'Contents: read',
        () => this.octokit.rest.git.getCommit({ ...this.base, commit_sha: at }),
      );
      const stories = data.parents.length > 1 ? trailerValues(data.message, STORY_TRAILER) : [];
      if (stories.length === 0 && options.base === undefined) break;
      // The newest merge of a story wins.
      for (const story of stories) if (!merged.has(story)) merged.set(story, at);
      sha = data.parents[0]?.sha ?? null;
    }
    return merged;
  }
}
