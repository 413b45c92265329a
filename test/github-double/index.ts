/**
 * Start a GitHub double for a test:
 *
 *   const gh = await startGitHubDouble();
 *   const alice = gh.seed.user({ login: 'alice', permission: 'write' });
 *   await gh.seed.repo({ owner: 'acme', name: 'shop' });
 *   const octokit = new Octokit({ baseUrl: gh.url, auth: alice.token });
 *   …
 *   await gh.close();
 *
 * After every test, a running double is checked for contract violations on its own
 * (test/support/after-each.ts); `close()` fails on violations raised after the last test.
 *
 * See docs/testing.md.
 */
import { reviewStore, type ReviewCommentRec, type ReviewRec } from './routes/reviews.js';
import { createPublicKey, randomBytes } from 'node:crypto';
import { registerCheck } from '../support/checks.js';
import type { Json } from './context.js';
import { Double, type DoubleOptions, type Violation } from './double.js';
import type { Clock, ClockMode, ClockOptions } from './clock.js';
import type { FaultSpec, LimitHit, Stats, TimelineEvent, TokenStats } from './faults.js';
import type { LimitName, LimitOptions } from './limits.js';
import { GitStore } from './git.js';
import { addField, DEFAULT_STATUS_OPTIONS } from './graphql.js';
import { closePull, mergePull, pushFiles } from './landing.js';
import { addLabels, createComment, removeLabel } from './routes/issues.js';
import { runJson, workflowIdOf } from './routes/actions.js';
import { mintInstallationToken } from './routes/repos.js';
import {
  nextId,
  now,
  repoKey,
  type CommentRec,
  type DispatchRec,
  type IssueRec,
  type Permission,
  type ProjectFieldRec,
  type ProjectRec,
  type RepoRec,
  type RunRec,
  type UserRec,
} from './state.js';
import type { BackgroundWork, Delivery, WebhookTarget } from './webhooks.js';

export type {
  BackgroundWork,
  Clock,
  ClockMode,
  ClockOptions,
  LimitHit,
  LimitName,
  LimitOptions,
  TimelineEvent,
  TokenStats,
  DoubleOptions,
  Violation,
  FaultSpec,
  Stats,
  Delivery,
  WebhookTarget,
  Permission,
};
export type { IssueRec, CommentRec, RunRec, DispatchRec, ProjectRec, UserRec };
export { SPEC_LAGS, READING_RULES, KNOWN_GAPS } from './exceptions.js';

export interface SeededUser {
  readonly login: string;
  readonly id: number;
  readonly nodeId: string;
  readonly token: string;
}

export interface RepoRef {
  readonly owner: string;
  readonly repo: string;
}

export interface GitHubDouble {
  /** Base URL for REST (`new Octokit({ baseUrl })`), GraphQL (`/graphql`) and git (`/<o>/<r>.git`). */
  readonly url: string;
  readonly violations: readonly Violation[];
  /** Throws (listing every violation) when any request, response, document or payload broke GitHub's contract. */
  assertNoViolations(): void;
  /** Returns the violations so far and forgets them (for tests that provoke one on purpose). */
  takeViolations(): Violation[];
  readonly stats: Stats;
  /** What the rate limits run on (`clock` option): `now()`, `sleep`, `advance` (see clock.ts). */
  readonly clock: Clock;
  /** Calls `listener` with each `workflow_dispatch` as GitHub records it; returns the unsubscribe. */
  onDispatch(listener: (d: DispatchRec) => void): () => void;
  readonly faults: { add(fault: FaultSpec): void; clear(): void };
  /**
   * The next `count` pushes (git over HTTP) that update `ref` (`refs/heads/epic/3`) wait until
   * all of them have come, then go on in the order they came (see push-holds.ts).
   */
  holdPushes(ref: string, count: number): void;
  readonly deliveries: readonly Delivery[];
  redeliver(deliveryId: string): Promise<Delivery>;
  setWebhookTarget(target: WebhookTarget | undefined): void;
  /** Resolves once every webhook in flight has been answered and registered background work is done. */
  idle(): Promise<void>;
  /**
   * Makes `idle()` also wait for work the receiver does after answering (an App that
   * acknowledges first and acts after).
   */
  waitFor(work: BackgroundWork): void;
  /** `http://x-access-token:<token>@127.0.0.1:<port>/<owner>/<repo>.git` */
  gitUrl(owner: string, repo: string, token: string): string;
  readonly seed: Seed;
  readonly act: Act;
  readonly state: StateView;
  close(): Promise<void>;
}

export interface Seed {
  user(u: { login: string; permission?: Permission; type?: 'User' | 'Bot' }): SeededUser;
  org(o: { login: string }): SeededUser;
  /** A repository with an initial commit on the default branch (`files` or a README). */
  repo(r: {
    owner: string;
    name: string;
    defaultBranch?: string;
    private?: boolean;
    files?: Record<string, string>;
    /** The repository this one is a fork of (its JSON then says `fork: true`). */
    forkOf?: RepoRef;
  }): Promise<RepoRef & { id: number; nodeId: string; cloneUrl: string }>;
  /** Per-repository permission, overriding the user's default. */
  permission(p: RepoRef & { login: string; permission: Permission }): void;
  /** The GitHub App; its JWTs are verified with `publicKey` (or the public half of `privateKey`). */
  app(a: {
    id?: number;
    slug?: string;
    privateKey?: string;
    publicKey?: string;
    /** Lifetime of the installation tokens it mints (default one hour, as on GitHub). */
    tokenLifetimeMs?: number;
  }): {
    id: number;
    slug: string;
    botLogin: string;
  };
  /**
   * An installation token of the App on `owner`'s installation, as
   * `POST /app/installations/{id}/access_tokens` mints it (no request made): it acts as the
   * App's bot and counts against the installation's limits.
   */
  installationToken(o: { owner: string }): { token: string; expiresAt: number };
  /**
   * A repository's `GITHUB_TOKEN`: acts as `github-actions[bot]` (with `permission`, default
   * `write`) and counts against the repository's limits (1,000 requests and 1,000 GraphQL
   * points an hour).
   */
  actionsToken(r: RepoRef & { permission?: Permission }): { token: string };
  issue(
    i: RepoRef & { title: string; body?: string; labels?: readonly string[]; author?: string },
  ): IssueRec;
  label(l: RepoRef & { name: string; color?: string; description?: string }): void;
  /**
   * A Projects (v2) board as GitHub creates it: Title and the default Status field (Todo,
   * In Progress, Done). `bare` leaves Status out; a `fields` entry named Status replaces it.
   */
  project(p: {
    owner: string;
    number?: number;
    title?: string;
    bare?: boolean;
    fields?: readonly {
      name: string;
      dataType: ProjectFieldRec['dataType'];
      options?: readonly string[];
    }[];
  }): ProjectRec;
}

export interface Act {
  openIssue(
    login: string,
    i: RepoRef & { title: string; body?: string; labels?: readonly string[] },
  ): IssueRec;
  editIssue(login: string, i: RepoRef & { number: number; title?: string; body?: string }): void;
  labelIssue(login: string, i: RepoRef & { number: number; label: string }): void;
  unlabelIssue(login: string, i: RepoRef & { number: number; label: string }): void;
  closeIssue(login: string, i: RepoRef & { number: number }): void;
  comment(login: string, c: RepoRef & { number: number; body: string }): Json;
  /**
   * A run GitHub starts by itself for another event than a dispatch: `push` (the copy of
   * the workflow on `headBranch` runs), `pull_request` (the pull request's copy, from
   * `headRepository`, a fork, when given). Its title is `displayTitle` (the `run-name`
   * that copy evaluates to). Queued, with `workflow_run.requested` sent; finish it with
   * `completeWorkflowRun`. Resolves to the run's id.
   */
  triggerWorkflowRun(
    login: string,
    r: RepoRef & {
      workflowPath: string;
      event: string;
      headBranch: string;
      headRepository?: RepoRef;
      displayTitle: string;
    },
  ): Promise<number>;
  /** A commit of `files` (null deletes a path) pushed on `branch`; the `push` webhook follows. */
  pushFiles(
    login: string,
    p: RepoRef & { branch: string; files: Record<string, string | null>; message: string },
  ): Promise<string>;
  /** Merges a pull request as its merge button does (a merge commit); see `PUT …/merge`. */
  mergePullRequest(login: string, p: RepoRef & { number: number }): Promise<string>;
  /** Closes a pull request without merging it. */
  closePullRequest(login: string, p: RepoRef & { number: number }): Promise<void>;
  /** The repository setting "Automatically delete head branches". */
  setDeleteBranchOnMerge(p: RepoRef & { value: boolean }): void;
  startWorkflowRun(runId: number): void;
  completeWorkflowRun(
    runId: number,
    conclusion: 'success' | 'failure' | 'cancelled' | 'timed_out' | 'skipped',
  ): void;
}

export interface StateView {
  issues(owner: string, repo: string): IssueRec[];
  issue(owner: string, repo: string, number: number): IssueRec | undefined;
  comments(owner: string, repo: string, issueNumber?: number): CommentRec[];
  labels(owner: string, repo: string): string[];
  dispatches(owner: string, repo: string): DispatchRec[];
  /** Pull request reviews and review comments (thread replies included), oldest first. */
  reviews(owner: string, repo: string): ReviewRec[];
  reviewComments(owner: string, repo: string): ReviewCommentRec[];
  runs(owner: string, repo: string): RunRec[];
  project(owner: string, number: number): ProjectRec | undefined;
  /** Commit sha of `refs/heads/<branch>` (or a full ref) in the bare repository. */
  ref(owner: string, repo: string, ref: string): Promise<string | undefined>;
  file(owner: string, repo: string, ref: string, path: string): Promise<string | undefined>;
  /** Path of the bare repository on disk. */
  repoDir(owner: string, repo: string): string;
  /** Installation tokens minted so far, oldest first, with when they expire (ms since the epoch). */
  installationTokens(): { token: string; expiresAt: number }[];
}

export async function startGitHubDouble(options: DoubleOptions = {}): Promise<GitHubDouble> {
  const d = new Double(await GitStore.create(), options);
  await d.listen();
  const repoOf = (owner: string, name: string): RepoRec => {
    const r = d.state.repos.get(repoKey(owner, name));
    if (!r) throw new Error(`github-double: no repository ${owner}/${name} (seed it first)`);
    return r;
  };
  const issueOf = (owner: string, name: string, n: number): { repo: RepoRec; issue: IssueRec } => {
    const repo = repoOf(owner, name);
    const issue = repo.issues.get(n);
    if (!issue) throw new Error(`github-double: no issue ${owner}/${name}#${n}`);
    return { repo, issue };
  };
  const findRun = (runId: number): { repo: RepoRec; run: RunRec } => {
    for (const repo of d.state.repos.values()) {
      const run = repo.runs.find((r) => r.id === runId);
      if (run) return { repo, run };
    }
    throw new Error(`github-double: no workflow run ${runId}`);
  };
  const seeded = (u: UserRec): SeededUser => ({
    login: u.login,
    id: u.id,
    nodeId: u.nodeId,
    token: u.token,
  });

  // The GitHub Actions app's installation on each repository (named in limit messages).
  const actionsInstallation = new Map<string, number>();
  const seed: Seed = {
    user: ({ login, permission = 'write', type = 'User' }) => {
      const existing = d.state.users.get(login.toLowerCase());
      if (existing) {
        existing.permission = permission;
        return seeded(existing);
      }
      return seeded(d.addUser(login, type, permission));
    },
    org: ({ login }) =>
      seeded(d.state.users.get(login.toLowerCase()) ?? d.addUser(login, 'Organization', 'none')),
    repo: async ({
      owner,
      name,
      defaultBranch = 'main',
      private: isPrivate = false,
      files = {},
      forkOf,
    }) => {
      if (!d.state.users.has(owner.toLowerCase())) d.addUser(owner, 'Organization', 'none');
      const ownerUser = d.user(owner);
      const dir = await d.git.init(owner, name, defaultBranch, files, d.identity(ownerUser));
      const id = nextId(d.state);
      const repo: RepoRec = {
        key: repoKey(owner, name),
        owner,
        name,
        id,
        nodeId: `R_kgDO${id}`,
        defaultBranch,
        private: isPrivate,
        ...(forkOf === undefined ? {} : { forkOf: repoOf(forkOf.owner, forkOf.repo).key }),
        dir,
        createdAt: now(),
        labels: new Map(),
        issues: new Map(),
        nextNumber: 1,
        comments: [],
        permissions: new Map(),
        workflowIds: new Map(),
        runs: [],
        dispatches: [],
        checkRuns: [],
        statuses: [],
        lock: Promise.resolve(),
      };
      d.state.repos.set(repo.key, repo);
      return {
        owner,
        repo: name,
        id,
        nodeId: repo.nodeId,
        cloneUrl: `${d.url}/${owner}/${name}.git`,
      };
    },
    permission: ({ owner, repo, login, permission }) => {
      d.user(login);
      repoOf(owner, repo).permissions.set(login.toLowerCase(), permission);
    },
    app: ({ id = 4242, slug = 'epicflow', privateKey, publicKey, tokenLifetimeMs }) => {
      const botLogin = `${slug}[bot]`;
      const bot = d.state.users.get(botLogin.toLowerCase()) ?? d.addUser(botLogin, 'Bot', 'admin');
      const key =
        publicKey ??
        (privateKey
          ? createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString()
          : undefined);
      d.state.app = {
        id,
        slug,
        nodeId: `A_kwDO${id}`,
        publicKey: key,
        bot,
        ...(tokenLifetimeMs === undefined ? {} : { tokenLifetimeMs }),
      };
      return { id, slug, botLogin };
    },
    installationToken: ({ owner }) => {
      if (!d.state.app) throw new Error('github-double: seed the app first (gh.seed.app)');
      return mintInstallationToken(d, d.installationFor(owner).id);
    },
    actionsToken: ({ owner, repo, permission = 'write' }) => {
      const r = repoOf(owner, repo);
      const login = 'github-actions[bot]';
      const bot = d.state.users.get(login) ?? d.addUser(login, 'Bot', 'none');
      r.permissions.set(login, permission);
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      d.state.tokens.set(token, bot);
      const installationId = actionsInstallation.get(r.key) ?? nextId(d.state);
      actionsInstallation.set(r.key, installationId);
      d.state.tokenKinds.set(token, { kind: 'actions', repoKey: r.key, installationId });
      return { token };
    },
    issue: ({ owner, repo, title, body, labels, author }) => {
      const r = repoOf(owner, repo);
      return d.newIssue(r, d.user(author ?? owner), {
        title,
        body: body ?? null,
        labels: labels ?? [],
      });
    },
    label: ({ owner, repo, name, color, description }) => {
      d.ensureLabel(repoOf(owner, repo), name, color, description ?? null);
    },
    project: ({ owner, number, title = 'Board', bare = false, fields = [] }) => {
      if (!d.state.users.has(owner.toLowerCase())) d.addUser(owner, 'Organization', 'none');
      const id = nextId(d.state);
      const t = now();
      const p: ProjectRec = {
        id: `PVT_kwDO${id}`,
        databaseId: id,
        number:
          number ??
          d.state.projects.filter((x) => x.owner.toLowerCase() === owner.toLowerCase()).length + 1,
        owner,
        title,
        fields: [],
        items: [],
        createdAt: t,
        updatedAt: t,
      };
      d.state.projects.push(p);
      addField(d, p, 'Title', 'TITLE', []);
      if (!bare && !fields.some((f) => f.name.toLowerCase() === 'status'))
        addField(d, p, 'Status', 'SINGLE_SELECT', DEFAULT_STATUS_OPTIONS);
      for (const f of fields)
        addField(
          d,
          p,
          f.name,
          f.dataType,
          (f.options ?? []).map((name) => ({ name })),
        );
      return p;
    },
  };

  const act: Act = {
    openIssue: (login, { owner, repo, title, body, labels }) => {
      const r = repoOf(owner, repo);
      const who = d.user(login);
      const issue = d.newIssue(r, who, { title, body: body ?? null });
      d.emit('issues', 'opened', { issue: d.issueJson(r, issue), ...d.hookContext(r, who) });
      addLabels(d, r, issue, labels ?? [], who);
      return issue;
    },
    editIssue: (login, { owner, repo, number, title, body }) => {
      const { repo: r, issue } = issueOf(owner, repo, number);
      const changes: Json = {};
      if (title !== undefined && title !== issue.title) {
        changes['title'] = { from: issue.title };
        issue.title = title;
      }
      if (body !== undefined && body !== issue.body) {
        changes['body'] = { from: issue.body ?? '' };
        issue.body = body;
      }
      issue.updatedAt = now();
      d.emit('issues', 'edited', {
        issue: d.issueJson(r, issue),
        changes,
        ...d.hookContext(r, d.user(login)),
      });
    },
    labelIssue: (login, { owner, repo, number, label }) => {
      const { repo: r, issue } = issueOf(owner, repo, number);
      addLabels(d, r, issue, [label], d.user(login));
    },
    unlabelIssue: (login, { owner, repo, number, label }) => {
      const { repo: r, issue } = issueOf(owner, repo, number);
      removeLabel(d, r, issue, label, d.user(login));
    },
    closeIssue: (login, { owner, repo, number }) => {
      const { repo: r, issue } = issueOf(owner, repo, number);
      if (issue.state === 'closed') return;
      issue.state = 'closed';
      issue.stateReason = 'completed';
      issue.closedAt = now();
      issue.closedBy = login;
      issue.updatedAt = issue.closedAt;
      d.emit('issues', 'closed', {
        issue: d.issueJson(r, issue),
        ...d.hookContext(r, d.user(login)),
      });
    },
    comment: (login, { owner, repo, number, body }) => {
      const { repo: r, issue } = issueOf(owner, repo, number);
      return createComment(d, r, issue, body, d.user(login));
    },
    pushFiles: (login, { owner, repo, ...input }) =>
      pushFiles(d, repoOf(owner, repo), d.user(login), input),
    mergePullRequest: async (login, { owner, repo, number }) => {
      const { repo: r, issue } = issueOf(owner, repo, number);
      if (!issue.pull) throw new Error(`github-double: #${number} is not a pull request`);
      const pr = issue as Parameters<typeof mergePull>[2];
      const merged = await mergePull(d, r, pr, d.user(login));
      return merged.sha;
    },
    closePullRequest: async (login, { owner, repo, number }) => {
      const { repo: r, issue } = issueOf(owner, repo, number);
      if (!issue.pull) throw new Error(`github-double: #${number} is not a pull request`);
      await closePull(d, r, issue as Parameters<typeof closePull>[2], d.user(login));
    },
    setDeleteBranchOnMerge: ({ owner, repo, value }) => {
      repoOf(owner, repo).deleteBranchOnMerge = value;
    },
    triggerWorkflowRun: async (login, r) => {
      const repo = repoOf(r.owner, r.repo);
      const head =
        r.headRepository === undefined
          ? repo
          : repoOf(r.headRepository.owner, r.headRepository.repo);
      const sha =
        (await d.git.resolveRef(head.dir, `refs/heads/${r.headBranch}`)) ??
        (await d.git.resolveRef(head.dir, `refs/heads/${head.defaultBranch}`));
      if (sha === undefined) {
        throw new Error(`github-double: ${head.owner}/${head.name} has no commit to run`);
      }
      const workflowId = workflowIdOf(d, repo, r.workflowPath);
      const id = nextId(d.state);
      const t = now();
      const actor = d.user(login);
      const run: RunRec = {
        repoKey: repo.key,
        id,
        nodeId: `WFR_kwLO${id}`,
        workflowId,
        workflowPath: r.workflowPath,
        name: r.displayTitle,
        displayTitle: r.displayTitle,
        ref: r.headBranch,
        headBranch: r.headBranch,
        headSha: sha,
        event: r.event,
        inputs: {},
        actor: actor.login,
        ...(head === repo ? {} : { headRepoKey: head.key }),
        status: 'queued',
        conclusion: null,
        createdAt: t,
        updatedAt: t,
        jobs: [],
      };
      repo.runs.push(run);
      d.emit('workflow_run', 'requested', {
        workflow_run: runJson(d, repo, run),
        workflow: d.fixtures.workflow(repo, workflowId, r.workflowPath),
        ...d.hookContext(repo, actor),
      });
      return id;
    },
    startWorkflowRun: (runId) => {
      const { repo, run } = findRun(runId);
      run.status = 'in_progress';
      run.updatedAt = now();
      run.jobs = [
        {
          id: nextId(d.state),
          name: 'story',
          status: 'in_progress',
          conclusion: null,
          startedAt: now(),
          completedAt: null,
        },
      ];
      d.emit('workflow_run', 'in_progress', {
        workflow_run: runJson(d, repo, run),
        workflow: d.fixtures.workflow(repo, run.workflowId, run.workflowPath),
        ...d.hookContext(repo, d.user(run.actor)),
      });
    },
    completeWorkflowRun: (runId, conclusion) => {
      const { repo, run } = findRun(runId);
      const t = now();
      if (run.jobs.length === 0) {
        run.jobs.push({
          id: nextId(d.state),
          name: 'story',
          status: 'queued',
          conclusion: null,
          startedAt: t,
          completedAt: null,
        });
      }
      for (const j of run.jobs) {
        j.status = 'completed';
        j.conclusion = conclusion;
        j.completedAt = t;
      }
      run.status = 'completed';
      run.conclusion = conclusion;
      run.updatedAt = t;
      d.emit('workflow_run', 'completed', {
        workflow_run: runJson(d, repo, run),
        workflow: d.fixtures.workflow(repo, run.workflowId, run.workflowPath),
        ...d.hookContext(repo, d.user(run.actor)),
      });
    },
  };

  const state: StateView = {
    issues: (owner, repo) => [...repoOf(owner, repo).issues.values()],
    issue: (owner, repo, n) => repoOf(owner, repo).issues.get(n),
    comments: (owner, repo, n) =>
      repoOf(owner, repo).comments.filter((c) => n === undefined || c.issueNumber === n),
    labels: (owner, repo) => [...repoOf(owner, repo).labels.values()].map((l) => l.name),
    dispatches: (owner, repo) => [...repoOf(owner, repo).dispatches],
    reviews: (owner, repo) => [...reviewStore(repoOf(owner, repo)).reviews],
    reviewComments: (owner, repo) => [...reviewStore(repoOf(owner, repo)).comments],
    runs: (owner, repo) => [...repoOf(owner, repo).runs],
    project: (owner, n) =>
      d.state.projects.find((p) => p.owner.toLowerCase() === owner.toLowerCase() && p.number === n),
    ref: (owner, repo, ref) =>
      d.git.resolveRef(
        repoOf(owner, repo).dir,
        ref.startsWith('refs/') ? ref : `refs/heads/${ref}`,
      ),
    file: async (owner, repo, ref, path) => {
      const r = repoOf(owner, repo);
      const sha = await d.git.resolveRef(
        r.dir,
        ref.startsWith('refs/') ? ref : `refs/heads/${ref}`,
      );
      const f = sha ? await d.git.readFile(r.dir, sha, path) : undefined;
      return f?.content.toString('utf8');
    },
    repoDir: (owner, repo) => repoOf(owner, repo).dir,
    installationTokens: () =>
      [...d.state.tokenExpiry].map(([token, expiresAt]) => ({ token, expiresAt })),
  };

  const assertNoViolations = (): void => {
    if (d.violations.length === 0) return;
    const lines = d.violations.map((v) => `- [${v.kind}] ${v.operation}: ${v.message}`);
    d.violations.length = 0;
    throw new Error(`GitHub contract violations:\n${lines.join('\n')}`);
  };
  // Checked after every test by test/support/after-each.ts, until closed.
  const unregister = registerCheck({ name: `GitHub double ${d.url}`, check: assertNoViolations });

  return {
    url: d.url,
    violations: d.violations,
    assertNoViolations,
    takeViolations: () => d.violations.splice(0),
    holdPushes: (ref, count) => d.holdPushes(ref, count),
    stats: d.stats,
    clock: d.clock,
    onDispatch: (listener) => {
      d.dispatchListeners.push(listener);
      return () => {
        const i = d.dispatchListeners.indexOf(listener);
        if (i >= 0) d.dispatchListeners.splice(i, 1);
      };
    },
    faults: d.faults,
    deliveries: d.webhooks.deliveries,
    redeliver: (id) => d.webhooks.redeliver(id),
    setWebhookTarget: (t) => {
      d.webhooks.target = t;
    },
    idle: () => d.webhooks.idle(),
    waitFor: (work) => {
      d.webhooks.background.push(work);
    },
    gitUrl: (owner, repo, token) =>
      `${d.url.replace('://', `://x-access-token:${token}@`)}/${owner}/${repo}.git`,
    seed,
    act,
    state,
    close: async () => {
      unregister();
      await d.close();
      // Violations raised after the last test (in afterAll, while shutting down) fail here.
      assertNoViolations();
    },
  };
}

/**
 * Milliseconds on the double's clock from the first time `label` was put on the issue to
 * the first `workflow_dispatch` after it whose input `input` names the issue's number;
 * undefined until both happened.
 */
export function timeToFirstDispatch(
  stats: Stats,
  e: RepoRef & { issue: number; label: string; input: string },
): number | undefined {
  const key = repoKey(e.owner, e.repo);
  const labeled = stats.timeline.find(
    (t) =>
      t.kind === 'labeled' &&
      t.repo === key &&
      t.issue === e.issue &&
      t.label.toLowerCase() === e.label.toLowerCase(),
  );
  if (!labeled) return undefined;
  const dispatch = stats.timeline.find(
    (t) =>
      t.kind === 'dispatch' &&
      t.repo === key &&
      t.at >= labeled.at &&
      String(t.inputs[e.input]) === String(e.issue),
  );
  return dispatch === undefined ? undefined : dispatch.at - labeled.at;
}
