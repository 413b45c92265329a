/**
 * The double's state: plain in-memory records, readable by tests through `gh.state`
 * and written through `gh.seed`, REST, GraphQL and `gh.act`. Git data is not here:
 * branches and files live in real bare repositories (one source of truth).
 */

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface UserRec {
  readonly login: string;
  readonly id: number;
  readonly nodeId: string;
  readonly type: 'User' | 'Bot' | 'Organization';
  /** Permission on every repository unless the repository says otherwise. */
  permission: Permission;
  /** Personal access token accepted for REST, GraphQL and git over HTTP. */
  readonly token: string;
}

export interface LabelRec {
  readonly id: number;
  readonly nodeId: string;
  name: string;
  color: string;
  description: string | null;
}

export interface PullRec {
  readonly head: string;
  readonly base: string;
  draft: boolean;
  merged: boolean;
  /** The merge commit, once merged (`PUT …/pulls/{n}/merge`). */
  mergeCommitSha?: string;
  mergedBy?: string;
}

export interface IssueRec {
  readonly repoKey: string;
  readonly id: number;
  readonly nodeId: string;
  readonly number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  stateReason: 'completed' | 'not_planned' | 'reopened' | 'duplicate' | null;
  labels: string[];
  /** Logins assigned, in the order they were added. */
  assignees: string[];
  readonly author: string;
  readonly createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  closedBy: string | null;
  /** Database id of the parent issue (sub-issues). */
  parentId: number | null;
  /** Database ids of sub-issues, in order. */
  subIssueIds: number[];
  /** Database ids of the issues blocking this one. */
  blockedByIds: number[];
  pull?: PullRec;
}

export interface CommentRec {
  readonly repoKey: string;
  readonly id: number;
  readonly nodeId: string;
  readonly issueNumber: number;
  body: string;
  readonly author: string;
  readonly createdAt: string;
  updatedAt: string;
}

export interface JobRec {
  readonly id: number;
  readonly name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  startedAt: string;
  completedAt: string | null;
}

export interface RunRec {
  readonly repoKey: string;
  readonly id: number;
  readonly nodeId: string;
  readonly workflowId: number;
  readonly workflowPath: string;
  /** The workflow's name. */
  readonly name: string;
  /** The evaluated `run-name` (the workflow's name without one): `display_title`. */
  readonly displayTitle: string;
  readonly ref: string;
  readonly headBranch: string;
  readonly headSha: string;
  readonly event: string;
  readonly inputs: Record<string, unknown>;
  readonly actor: string;
  /** Key of the repository the run's code came from, when not its own (a fork's pull request). */
  readonly headRepoKey?: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  readonly createdAt: string;
  updatedAt: string;
  jobs: JobRec[];
}

/** A check run on a commit, as a GitHub App (or GitHub Actions) reports one. */
export interface CheckRunRec {
  readonly id: number;
  readonly nodeId: string;
  readonly headSha: string;
  name: string;
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
  /** Set once completed. */
  conclusion: string | null;
  startedAt: string;
  completedAt: string | null;
  detailsUrl: string | null;
  externalId: string;
  title: string | null;
  summary: string | null;
  /** Login of the App's bot that created it (`github-actions[bot]` for a `GITHUB_TOKEN`). */
  readonly by: string;
}

/** A commit status (`POST /repos/{o}/{r}/statuses/{sha}`): the last one per context counts. */
export interface StatusRec {
  readonly id: number;
  readonly nodeId: string;
  readonly sha: string;
  readonly state: 'error' | 'failure' | 'pending' | 'success';
  readonly context: string;
  readonly description: string | null;
  readonly targetUrl: string | null;
  readonly creator: string;
  readonly createdAt: string;
}

export interface DispatchRec {
  readonly repoKey: string;
  readonly workflowId: number;
  readonly workflowPath: string;
  readonly ref: string;
  readonly inputs: Record<string, unknown>;
  readonly actor: string;
  readonly runId: number;
  /** When it was dispatched, ms since the epoch on the double's clock. */
  readonly at: number;
}

export interface RepoRec {
  readonly key: string;
  readonly owner: string;
  readonly name: string;
  readonly id: number;
  readonly nodeId: string;
  readonly defaultBranch: string;
  readonly private: boolean;
  /** Key of the repository this one is a fork of (`fork: true` in its JSON). */
  readonly forkOf?: string;
  /** Bare repository on disk. */
  readonly dir: string;
  readonly createdAt: string;
  readonly labels: Map<string, LabelRec>;
  readonly issues: Map<number, IssueRec>;
  nextNumber: number;
  readonly comments: CommentRec[];
  readonly permissions: Map<string, Permission>;
  readonly workflowIds: Map<string, number>;
  readonly runs: RunRec[];
  readonly dispatches: DispatchRec[];
  /** Check runs and commit statuses on the repository's commits, oldest first. */
  readonly checkRuns: CheckRunRec[];
  readonly statuses: StatusRec[];
  /** The repository setting `delete_branch_on_merge` (GitHub's default: false). */
  deleteBranchOnMerge?: boolean;
  /** Serialises writes to the bare repository (contents, refs, merges). */
  lock: Promise<unknown>;
}

export interface ProjectOptionRec {
  readonly id: string;
  name: string;
  color: string;
  description: string;
}

export interface ProjectFieldRec {
  readonly id: string;
  readonly databaseId: number;
  name: string;
  readonly dataType: 'TEXT' | 'NUMBER' | 'DATE' | 'SINGLE_SELECT' | 'TITLE';
  options: ProjectOptionRec[];
  readonly createdAt: string;
}

export type FieldValue =
  { text: string } | { number: number } | { date: string } | { singleSelectOptionId: string };

export interface ProjectItemRec {
  readonly id: string;
  readonly databaseId: number;
  /** Node id of the issue or pull request. */
  readonly contentId: string;
  readonly values: Map<string, FieldValue>;
  readonly createdAt: string;
  updatedAt: string;
}

export interface ProjectRec {
  readonly id: string;
  readonly databaseId: number;
  readonly number: number;
  readonly owner: string;
  title: string;
  readonly fields: ProjectFieldRec[];
  readonly items: ProjectItemRec[];
  readonly createdAt: string;
  updatedAt: string;
}

export interface AppRec {
  readonly id: number;
  readonly slug: string;
  readonly nodeId: string;
  /** PEM public key used to verify the app's JWTs; unset means "accept any well-formed JWT". */
  readonly publicKey: string | undefined;
  readonly bot: UserRec;
  /** How long installation tokens live (GitHub: one hour); shorter to test refreshing. */
  readonly tokenLifetimeMs?: number;
}

/** An installation token counts against its installation; a `GITHUB_TOKEN` against its repository. */
export type TokenKind =
  | { readonly kind: 'installation'; readonly installationId: number }
  | { readonly kind: 'actions'; readonly repoKey: string; readonly installationId: number };

export interface InstallationRec {
  readonly id: number;
  readonly account: string;
}

export interface DoubleState {
  readonly users: Map<string, UserRec>;
  readonly tokens: Map<string, UserRec>;
  /** When installation tokens expire (ms since the epoch); other tokens never do. */
  readonly tokenExpiry: Map<string, number>;
  /** Tokens that are not a user's own: an App installation's, or a repository's `GITHUB_TOKEN`. */
  readonly tokenKinds: Map<string, TokenKind>;
  readonly repos: Map<string, RepoRec>;
  readonly projects: ProjectRec[];
  readonly installations: Map<string, InstallationRec>;
  app: AppRec | undefined;
  nextId: number;
}

export function newState(): DoubleState {
  return {
    users: new Map(),
    tokens: new Map(),
    tokenExpiry: new Map(),
    tokenKinds: new Map(),
    repos: new Map(),
    projects: [],
    installations: new Map(),
    app: undefined,
    nextId: 1000,
  };
}

export function nextId(state: DoubleState): number {
  state.nextId += 1;
  return state.nextId;
}

/** GitHub's timestamp form: ISO 8601 without milliseconds. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function repoKey(owner: string, name: string): string {
  return `${owner}/${name}`.toLowerCase();
}
