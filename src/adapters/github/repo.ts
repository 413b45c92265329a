/**
 * One repository as epicflow sees it on GitHub. Every write is an idempotent
 * "ensure": find the thing again by state (hidden marker plus the bot's own
 * login or the epic owner's, branch name, head branch), create it when missing,
 * change it only when it differs — so a redelivered webhook or a restarted App
 * never duplicates work.
 *
 * This is the facade the use cases hold: each kind of resource lives in its own
 * module under `resources/` (comments, issues, branches, contents, pulls,
 * workflows, permissions, the epic branch's history) and is reached through the
 * methods below.
 */
import { ProjectBoard } from './board.js';
import { GitHubCache } from './cache.js';
import { Branches } from './resources/branches.js';
import { Comments } from './resources/comments.js';
import { Contents } from './resources/contents.js';
import { Dependencies } from './resources/dependencies.js';
import { History } from './resources/history.js';
import { Issues } from './resources/issues.js';
import { IssueBodies } from './resources/issue-body.js';
import { IssueTools } from './resources/issue-tools.js';
import { Permissions } from './resources/permissions.js';
import { Pulls } from './resources/pulls.js';
import { Reviews } from './resources/reviews.js';
import type { GitHubClient, RepoScope } from './resources/resource.js';
import { Workflows } from './resources/workflows.js';

export { CONFIG_PATH } from './resources/contents.js';
export type { IssueSummary } from './resources/issues.js';
export type { ListedReviewItem } from './resources/reviews.js';
export type { GitHubClient } from './resources/resource.js';
export { type WorkflowRunSummary } from './resources/workflows.js';

/** Bots sign in as `name[bot]`; some APIs drop the suffix, so compare without it. */
function sameLogin(a: string | undefined, b: string): boolean {
  const norm = (s: string): string => s.toLowerCase().replace(/\[bot\]$/, '');
  return a !== undefined && norm(a) === norm(b);
}

interface GitHubRepoOptions {
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

export class GitHubRepo implements RepoScope {
  readonly owner: string;
  readonly repo: string;
  readonly octokit: GitHubClient;
  readonly botLogin: string;
  readonly cache: GitHubCache;
  readonly peers: readonly string[];

  private readonly permissions = new Permissions(this);
  private readonly comments = new Comments(this);
  private readonly issues = new Issues(this);
  private readonly issueBodies = new IssueBodies(this);
  private readonly issueTools = new IssueTools(this);
  private readonly dependencies = new Dependencies(this);
  private readonly branches = new Branches(this);
  private readonly contents = new Contents(this);
  private readonly pulls = new Pulls(this);
  private readonly reviews = new Reviews(this);
  private readonly workflows = new Workflows(this);
  private readonly history = new History(this, this.branches);

  constructor(options: GitHubRepoOptions) {
    this.owner = options.owner;
    this.repo = options.repo;
    this.octokit = options.octokit;
    this.botLogin = options.botLogin;
    this.cache = options.cache ?? new GitHubCache();
    this.peers = options.peers ?? [];
  }

  /**
   * The repository a webhook delivery is about, acting as the installation: `delivery`
   * is probot's context, which carries the installation's client.
   */
  static ofDelivery(
    delivery: { readonly octokit: unknown; repo(): { owner: string; repo: string } },
    options: { readonly botLogin: string; readonly cache?: GitHubCache },
  ): GitHubRepo {
    const { owner, repo } = delivery.repo();
    return new GitHubRepo({
      owner,
      repo,
      botLogin: options.botLogin,
      octokit: delivery.octokit as GitHubClient,
      ...(options.cache === undefined ? {} : { cache: options.cache }),
    });
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

  // Each method below is its resource's: see the module named for its documentation.

  /** The Projects (v2) board at `url`, read with this repository's client (see board.ts). */
  openBoard(url: string, options?: Parameters<typeof ProjectBoard.open>[2]): Promise<ProjectBoard> {
    return ProjectBoard.open(this.octokit, url, options);
  }

  // resources/permissions.ts
  readonly permissionOf: Permissions['permissionOf'] = (...a) =>
    this.permissions.permissionOf(...a);

  // resources/comments.ts
  readonly findComment: Comments['findComment'] = (...a) => this.comments.findComment(...a);
  readonly ensureComment: Comments['ensureComment'] = (...a) => this.comments.ensureComment(...a);
  readonly reply: Comments['reply'] = (...a) => this.comments.reply(...a);
  readonly knowComments: Comments['knowComments'] = (...a) => this.comments.knowComments(...a);

  // resources/issues.ts
  readonly getIssue: Issues['getIssue'] = (...a) => this.issues.getIssue(...a);
  readonly labelledIssue: Issues['labelledIssue'] = (...a) => this.issues.labelledIssue(...a);
  readonly listSubIssues: Issues['listSubIssues'] = (...a) => this.issues.listSubIssues(...a);
  readonly blockedBy: Issues['blockedBy'] = (...a) => this.issues.blockedBy(...a);
  readonly ensureSubIssue: Issues['ensureSubIssue'] = (...a) => this.issues.ensureSubIssue(...a);
  readonly recentIssues: Issues['recentIssues'] = (...a) => this.issues.recentIssues(...a);
  readonly closeIssue: Issues['closeIssue'] = (...a) => this.issues.closeIssue(...a);
  readonly reopenIssue: Issues['reopenIssue'] = (...a) => this.issues.reopenIssue(...a);

  // resources/issue-body.ts
  readonly ensureIssueBody: IssueBodies['ensureIssueBody'] = (...a) =>
    this.issueBodies.ensureIssueBody(...a);

  // resources/issue-tools.ts
  readonly ensureIssueLabels: IssueTools['ensureIssueLabels'] = (...a) =>
    this.issueTools.ensureIssueLabels(...a);
  readonly ensureAssignees: IssueTools['ensureAssignees'] = (...a) =>
    this.issueTools.ensureAssignees(...a);

  // resources/dependencies.ts
  readonly ensureBlockedBy: Dependencies['ensureBlockedBy'] = (...a) =>
    this.dependencies.ensureBlockedBy(...a);
  readonly unlinkSubIssue: Dependencies['unlinkSubIssue'] = (...a) =>
    this.dependencies.unlinkSubIssue(...a);

  // resources/branches.ts
  readonly defaultBranch: Branches['defaultBranch'] = (...a) => this.branches.defaultBranch(...a);
  readonly getBranchSha: Branches['getBranchSha'] = (...a) => this.branches.getBranchSha(...a);
  readonly ensureBranch: Branches['ensureBranch'] = (...a) => this.branches.ensureBranch(...a);
  readonly createBranch: Branches['createBranch'] = (...a) => this.branches.createBranch(...a);
  readonly ensureBranchWithCommit: Branches['ensureBranchWithCommit'] = (...a) =>
    this.branches.ensureBranchWithCommit(...a);

  // resources/contents.ts
  readonly readFile: Contents['readFile'] = (...a) => this.contents.readFile(...a);
  readonly readFileWithSha: Contents['readFileWithSha'] = (...a) =>
    this.contents.readFileWithSha(...a);
  readonly loadConfigText: Contents['loadConfigText'] = (...a) =>
    this.contents.loadConfigText(...a);

  // resources/pulls.ts
  readonly headOf: Pulls['headOf'] = (...a) => this.pulls.headOf(...a);
  readonly findOpenPr: Pulls['findOpenPr'] = (...a) => this.pulls.findOpenPr(...a);
  readonly convertToDraft: Pulls['convertToDraft'] = (...a) => this.pulls.convertToDraft(...a);
  readonly listReviewItems: Reviews['listReviewItems'] = (...a) =>
    this.reviews.listReviewItems(...a);
  readonly ensureReviewAnswer: Reviews['ensureReviewAnswer'] = (...a) =>
    this.reviews.ensureReviewAnswer(...a);
  readonly ensureDraftPr: Pulls['ensureDraftPr'] = (...a) => this.pulls.ensureDraftPr(...a);
  readonly markReadyForReview: Pulls['markReadyForReview'] = (...a) =>
    this.pulls.markReadyForReview(...a);

  // resources/workflows.ts
  readonly dispatchWorkflow: Workflows['dispatchWorkflow'] = (...a) =>
    this.workflows.dispatchWorkflow(...a);
  readonly workflowRun: Workflows['workflowRun'] = (...a) => this.workflows.workflowRun(...a);
  readonly workflowRuns: Workflows['workflowRuns'] = (...a) => this.workflows.workflowRuns(...a);

  // resources/history.ts
  readonly mergedStories: History['mergedStories'] = (...a) => this.history.mergedStories(...a);
}
