/**
 * GitHub's GraphQL endpoint for what epicflow uses: Projects v2 (find a board, its fields and
 * single-select options, add items, set field values, create fields), marking a pull request
 * ready for review, sub-issues, and node lookup. Every document is validated against GitHub's
 * published schema and executed by graphql-js against that same schema, so answers can only
 * have the shapes GitHub's schema allows.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLError } from 'graphql';
import { execute, Kind, parse, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Json } from './context.js';
import type { Double } from './double.js';
import { CONTENT_CREATING } from './faults.js';
import { queryCost } from './graphql-cost.js';
import { Limits } from './limits.js';
import { rollupOf } from './routes/checks.js';
import { schemaFor } from './graphql-schema.js';
import {
  nextId,
  now,
  type CheckRunRec,
  type FieldValue,
  type IssueRec,
  type ProjectFieldRec,
  type ProjectItemRec,
  type ProjectOptionRec,
  type ProjectRec,
  type RepoRec,
  type UserRec,
} from './state.js';

/** An error GitHub itself would answer (NOT_FOUND, UNPROCESSABLE…), not a contract violation. */
class GitHubGraphqlError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

type View = Record<string, unknown>;
type Args = Record<string, unknown>;

/** Conclusions GitHub counts as a failed check run in a commit's combined state. */
const FAILED_CONCLUSIONS: ReadonlySet<string> = new Set([
  'failure',
  'timed_out',
  'cancelled',
  'action_required',
  'startup_failure',
]);

const COLORS = ['GRAY', 'BLUE', 'GREEN', 'YELLOW', 'ORANGE', 'RED', 'PINK', 'PURPLE'];

/** The Status options GitHub gives a new project (names, colours and descriptions as GitHub's). */
export const DEFAULT_STATUS_OPTIONS: readonly OptionInput[] = [
  { name: 'Todo', color: 'GREEN', description: "This item hasn't been started" },
  { name: 'In Progress', color: 'YELLOW', description: 'This is actively being worked on' },
  { name: 'Done', color: 'PURPLE', description: 'This has been completed' },
];

interface OptionInput {
  readonly name: string;
  readonly color?: string;
  readonly description?: string;
}

function connection<T>(list: readonly T[], args: Args, name: string): View {
  const first = args['first'] as number | undefined;
  const last = args['last'] as number | undefined;
  if (first === undefined && last === undefined) {
    throw new GitHubGraphqlError(
      'MISSING_PAGINATION_BOUNDARIES',
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${name}\` connection.`,
    );
  }
  const n = first ?? last ?? 0;
  if (n < 0 || n > 100) {
    throw new GitHubGraphqlError(
      'EXCESSIVE_PAGINATION',
      `Requesting ${n} records on the \`${name}\` connection exceeds the \`${first !== undefined ? 'first' : 'last'}\` limit of 100 records.`,
    );
  }
  const after =
    typeof args['after'] === 'string'
      ? Number(Buffer.from(args['after'], 'base64').toString('utf8')) + 1
      : 0;
  const start = first !== undefined ? after : Math.max(0, list.length - n);
  const slice = list.slice(start, start + n);
  const cursor = (i: number): string => Buffer.from(String(start + i)).toString('base64');
  return {
    nodes: slice,
    edges: slice.map((node, i) => ({ node, cursor: cursor(i) })),
    totalCount: list.length,
    pageInfo: {
      hasNextPage: start + slice.length < list.length,
      hasPreviousPage: start > 0,
      startCursor: slice.length > 0 ? cursor(0) : null,
      endCursor: slice.length > 0 ? cursor(slice.length - 1) : null,
    },
  };
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export class GraphqlEndpoint {
  /** Documents already parsed and found valid, by source text. */
  private readonly documents = new Map<string, DocumentNode>();

  constructor(private readonly double: Double) {}

  async handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    const d = this.double;
    const auth = d.authenticate(req.headers.authorization);
    const actor = auth instanceof Error ? undefined : auth.actor;
    const account =
      auth instanceof Error
        ? d.accountOf({ auth: 'anonymous', actor: undefined })
        : d.accountOf(auth);
    const token = auth instanceof Error ? 'invalid' : (auth.token ?? auth.auth);
    const ts = d.tokenStats(token, actor?.login ?? '', account.key);
    ts.graphql += 1;
    let request: { query?: unknown; variables?: unknown; operationName?: unknown };
    try {
      request = JSON.parse(raw.toString('utf8')) as typeof request;
    } catch {
      return d.send(res, 400, { message: 'Problems parsing JSON' }, {});
    }
    const query = typeof request.query === 'string' ? request.query : '';
    let document: DocumentNode;
    try {
      document = this.documents.get(query) ?? parse(query);
    } catch (e) {
      d.violation('graphql', 'graphql (unparsable)', (e as Error).message);
      return d.send(
        res,
        200,
        { errors: [{ message: `github-double: ${(e as Error).message}` }] },
        {},
      );
    }
    const op = document.definitions.find(
      (def): def is OperationDefinitionNode =>
        def.kind === Kind.OPERATION_DEFINITION &&
        (typeof request.operationName !== 'string' || def.name?.value === request.operationName),
    );
    const opName = op?.name?.value ?? 'anonymous';
    const label = `graphql ${opName}`;
    d.stats.graphql[opName] = (d.stats.graphql[opName] ?? 0) + 1;
    ts.operations[label] = (ts.operations[label] ?? 0) + 1;
    const topFields = (op?.selectionSet.selections ?? []).flatMap((s) =>
      s.kind === Kind.FIELD ? [s.name.value] : [],
    );
    const names = ['POST /graphql', `graphql:${opName}`, ...topFields.map((f) => `graphql:${f}`)];
    const now = d.clock.now();
    const peek = Limits.headers(d.limits.peek(account, 'graphql', now), 'graphql');
    if (await d.applyFault(res, names, peek, account)) return;
    if (auth instanceof Error || !actor) {
      return d.send(
        res,
        401,
        {
          message: 'This endpoint requires you to be authenticated.',
          documentation_url:
            'https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql',
        },
        peek,
      );
    }
    const mutation = op?.operation === 'mutation';
    const created = mutation
      ? topFields.filter((f) => CONTENT_CREATING.has(`graphql:${f}`)).length
      : 0;
    d.stats.contentCreating += created;
    if (created > 0) {
      d.stats.contentCreatingRequests += 1;
      ts.contentCreating += 1;
    }
    // Clients send the same few documents again and again: each is validated against GitHub's
    // whole schema the first time it is seen, and run against the part of it it reaches.
    const { schema, errors: invalid } = schemaFor(query, document);
    if (invalid.length === 0 && this.documents.size < 1000) this.documents.set(query, document);
    if (d.contract) {
      if (invalid.length > 0) {
        for (const e of invalid) d.violation('graphql', label, e.message);
        return d.send(
          res,
          200,
          {
            errors: invalid.map((e) => ({
              message: `${label}: ${e.message}`,
              locations: e.locations,
            })),
          },
          peek,
        );
      }
    }
    const variables = (request.variables as Record<string, unknown> | undefined) ?? {};
    const fragments = new Map(
      document.definitions.flatMap((def) =>
        def.kind === Kind.FRAGMENT_DEFINITION ? [[def.name.value, def] as const] : [],
      ),
    );
    const cost = op
      ? queryCost(schema, op, fragments, variables)
      : { cost: 1, requests: 0, nodeCount: 0 };
    // Secondary limits first (a 403 without x-ratelimit-* headers), then the points.
    const secondary = d.limits.secondary(
      account,
      { resource: 'graphql', points: mutation ? 5 : 1, creates: created > 0 },
      now,
    );
    const who = { account, token, route: label, ts };
    if (secondary !== undefined) {
      return d.refuse(res, d.limits.secondaryRefusal(secondary, 'graphql', now), who);
    }
    const charged = d.limits.charge(account, 'graphql', cost.cost, now);
    if (!charged.ok) {
      return d.refuse(res, d.limits.graphqlRefusal(account, charged.state, now), who);
    }
    d.stats.graphqlPoints += cost.cost;
    ts.graphqlPoints += cost.cost;
    const rateLimit = {
      __typename: 'RateLimit',
      cost: cost.cost,
      nodeCount: cost.nodeCount,
      limit: charged.state.limit,
      remaining: charged.state.remaining,
      used: charged.state.used,
      resetAt: new Date(charged.state.resetAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    const result = await execute({
      schema,
      document,
      rootValue: { ...this.root(actor), rateLimit: () => rateLimit },
      variableValues: variables,
      ...(typeof request.operationName === 'string'
        ? { operationName: request.operationName }
        : {}),
    });
    const errors = (result.errors ?? []).map((e: GraphQLError) => {
      const original = e.originalError;
      if (original instanceof GitHubGraphqlError) {
        return {
          type: original.type,
          path: e.path,
          locations: e.locations,
          message: original.message,
        };
      }
      d.violation('graphql', label, e.message);
      return { path: e.path, locations: e.locations, message: `${label}: ${e.message}` };
    });
    const body: Json = {};
    if (result.data !== undefined) body['data'] = result.data;
    if (errors.length > 0) body['errors'] = errors;
    return d.send(res, 200, body, Limits.headers(charged.state, 'graphql'));
  }

  // ---------------------------------------------------------------- views

  private root(actor: UserRec): View {
    const d = this.double;
    return {
      viewer: () => this.ownerView(actor),
      organization: ({ login }: Args) => {
        const u = d.state.users.get(String(login).toLowerCase());
        if (u?.type !== 'Organization')
          throw new GitHubGraphqlError(
            'NOT_FOUND',
            `Could not resolve to an Organization with the login of '${String(login)}'.`,
          );
        return this.ownerView(u);
      },
      user: ({ login }: Args) => {
        const u = d.state.users.get(String(login).toLowerCase());
        if (!u || u.type === 'Organization')
          throw new GitHubGraphqlError(
            'NOT_FOUND',
            `Could not resolve to a User with the login of '${String(login)}'.`,
          );
        return this.ownerView(u);
      },
      repository: ({ owner, name }: Args) => {
        const r = d.state.repos.get(`${String(owner)}/${String(name)}`.toLowerCase());
        if (!r)
          throw new GitHubGraphqlError(
            'NOT_FOUND',
            `Could not resolve to a Repository with the name '${String(owner)}/${String(name)}'.`,
          );
        return this.repoView(r);
      },
      node: ({ id }: Args) => this.node(String(id)),
      nodes: ({ ids }: Args) => (ids as string[]).map((id) => this.node(id)),
      addProjectV2ItemById: ({ input }: Args) => this.addItem(input as Args),
      updateProjectV2ItemFieldValue: ({ input }: Args) => this.updateValue(input as Args),
      createProjectV2Field: ({ input }: Args) => this.createField(input as Args),
      updateProjectV2Field: ({ input }: Args) => this.updateField(input as Args),
      markPullRequestReadyForReview: ({ input }: Args) => this.markReady(input as Args),
      convertPullRequestToDraft: ({ input }: Args) => this.markReady(input as Args, true),
      addSubIssue: ({ input }: Args) => this.addSubIssue(input as Args, actor),
    };
  }

  private node(id: string): View | null {
    const d = this.double;
    for (const p of d.state.projects) {
      if (p.id === id) return this.projectView(p);
      const f = p.fields.find((x) => x.id === id);
      if (f) return this.fieldView(p, f);
      const it = p.items.find((x) => x.id === id);
      if (it) return this.itemView(p, it);
    }
    for (const r of d.state.repos.values()) {
      if (r.nodeId === id) return this.repoView(r);
      for (const i of r.issues.values()) if (i.nodeId === id) return this.issueView(r, i);
    }
    for (const u of d.state.users.values()) if (u.nodeId === id) return this.ownerView(u);
    return null;
  }

  private need<T>(value: T | null | undefined, type: string, id: unknown): T {
    if (value === null || value === undefined) {
      throw new GitHubGraphqlError(
        'NOT_FOUND',
        `Could not resolve to a node with the global id of '${String(id)}'${type ? ` (${type})` : ''}.`,
      );
    }
    return value;
  }

  private findProject(id: unknown): ProjectRec {
    return this.need(
      this.double.state.projects.find((p) => p.id === id),
      'ProjectV2',
      id,
    );
  }

  private findContent(id: unknown): { repo: RepoRec; issue: IssueRec } | undefined {
    for (const r of this.double.state.repos.values()) {
      for (const i of r.issues.values()) if (i.nodeId === id) return { repo: r, issue: i };
    }
    return undefined;
  }

  ownerView(u: UserRec): View {
    const d = this.double;
    return {
      __typename: u.type,
      id: u.nodeId,
      login: u.login,
      databaseId: u.id,
      url: `${d.url}/${u.login}`,
      resourcePath: `/${u.login}`,
      name: u.login,
      projectV2: ({ number }: Args) => {
        const p = d.state.projects.find(
          (x) => x.owner.toLowerCase() === u.login.toLowerCase() && x.number === number,
        );
        if (!p)
          throw new GitHubGraphqlError(
            'NOT_FOUND',
            `Could not resolve to a ProjectV2 with the number ${String(number)}.`,
          );
        return this.projectView(p);
      },
      projectsV2: (args: Args) =>
        connection(
          d.state.projects
            .filter((x) => x.owner.toLowerCase() === u.login.toLowerCase())
            .map((p) => this.projectView(p)),
          args,
          'projectsV2',
        ),
    };
  }

  repoView(r: RepoRec): View {
    const d = this.double;
    return {
      __typename: 'Repository',
      id: r.nodeId,
      databaseId: r.id,
      name: r.name,
      nameWithOwner: `${r.owner}/${r.name}`,
      url: `${d.url}/${r.owner}/${r.name}`,
      isPrivate: r.private,
      owner: () => this.ownerView(d.user(r.owner)),
      defaultBranchRef: {
        __typename: 'Ref',
        id: `REF_${r.id}`,
        name: r.defaultBranch,
        prefix: 'refs/heads/',
      },
      issue: ({ number }: Args) => {
        const i = r.issues.get(Number(number));
        return i && !i.pull ? this.issueView(r, i) : null;
      },
      pullRequest: ({ number }: Args) => {
        const i = r.issues.get(Number(number));
        return i?.pull ? this.issueView(r, i) : null;
      },
      pullRequests: (args: Args) => {
        const states = (args['states'] as string[] | undefined) ?? [];
        const list = [...r.issues.values()].filter((i) => {
          if (!i.pull) return false;
          if (args['headRefName'] != null && i.pull.head !== args['headRefName']) return false;
          if (args['baseRefName'] != null && i.pull.base !== args['baseRefName']) return false;
          const state = i.pull.merged ? 'MERGED' : i.state === 'open' ? 'OPEN' : 'CLOSED';
          return states.length === 0 || states.includes(state);
        });
        return connection(
          list.map((i) => this.issueView(r, i)),
          args,
          'pullRequests',
        );
      },
      // Git objects: `object(expression: "<rev>:<path>")` or `object(oid:)`, and refs.
      object: async ({ expression, oid }: Args) => {
        const rev = typeof oid === 'string' ? oid : String(expression ?? '');
        const sha = await d.git.revParse(r.dir, rev);
        return sha === undefined ? null : this.gitObjectView(r, sha);
      },
      ref: async ({ qualifiedName }: Args) => {
        const name = String(qualifiedName);
        const full = name.startsWith('refs/') ? name : `refs/heads/${name}`;
        const sha = await d.git.resolveRef(r.dir, full);
        if (sha === undefined) return null;
        const prefix = full.slice(0, full.indexOf('/', 'refs/'.length) + 1);
        return {
          __typename: 'Ref',
          id: Buffer.from(`ref:${r.key}:${full}`).toString('base64'),
          name: full.slice(prefix.length),
          prefix,
          target: () => this.gitObjectView(r, sha),
        };
      },
    };
  }

  /** A commit, tree or blob of the repository, as GitHub's `GitObject` types. */
  async gitObjectView(r: RepoRec, sha: string): Promise<View | null> {
    const git = this.double.git;
    const type = await git.objectType(r.dir, sha);
    const base = {
      id: Buffer.from(`${type ?? ''}:${sha}`).toString('base64'),
      oid: sha,
      abbreviatedOid: sha.slice(0, 7),
      repository: () => this.repoView(r),
    };
    if (type === 'blob') {
      const bytes = (await git.readBlob(r.dir, sha)) ?? Buffer.alloc(0);
      const binary = bytes.includes(0);
      return {
        ...base,
        __typename: 'Blob',
        byteSize: bytes.length,
        isBinary: binary,
        isTruncated: false,
        text: binary ? null : bytes.toString('utf8'),
      };
    }
    if (type === 'tree') {
      const entries = await git.listTree(r.dir, sha, false);
      return {
        ...base,
        __typename: 'Tree',
        entries: entries.map((e) => ({
          __typename: 'TreeEntry',
          name: e.path,
          path: e.path,
          oid: e.sha,
          mode: parseInt(e.mode, 8),
          type: e.type,
          size: e.size ?? 0,
          extension: e.path.includes('.') ? `.${e.path.split('.').pop() ?? ''}` : null,
          isGenerated: false,
          object: () => this.gitObjectView(r, e.sha),
        })),
      };
    }
    if (type === 'commit') {
      const c = await git.readCommit(r.dir, sha);
      if (!c) return null;
      return {
        ...base,
        __typename: 'Commit',
        message: c.message,
        messageHeadline: c.message.split('\n')[0] ?? '',
        committedDate: c.committer.date,
        authoredDate: c.author.date,
        url: `${this.double.url}/${r.owner}/${r.name}/commit/${sha}`,
        tree: () => this.gitObjectView(r, c.tree),
        statusCheckRollup: () => this.rollupView(r, sha),
        parents: (args: Args) =>
          connection(
            c.parents.map((p) => ({
              __typename: 'Commit',
              oid: p,
              id: p,
              abbreviatedOid: p.slice(0, 7),
              message: async () => (await git.readCommit(r.dir, p))?.message ?? null,
            })),
            args,
            'parents',
          ),
      };
    }
    return null;
  }

  /**
   * A commit's check runs and commit statuses (`StatusCheckRollup`); null when it has none.
   * Its `state` is GitHub's combined one: failure when any failed, else pending when any
   * has not finished, else success.
   */
  rollupView(r: RepoRec, sha: string): View | null {
    const { runs, statuses } = rollupOf(r, sha);
    if (runs.length === 0 && statuses.length === 0) return null;
    const d = this.double;
    const failedRun = (c: CheckRunRec): boolean =>
      c.status === 'completed' && FAILED_CONCLUSIONS.has(c.conclusion ?? '');
    const state = statuses.some((s) => s.state === 'error')
      ? 'ERROR'
      : statuses.some((s) => s.state === 'failure') || runs.some(failedRun)
        ? 'FAILURE'
        : statuses.some((s) => s.state === 'pending') || runs.some((c) => c.status !== 'completed')
          ? 'PENDING'
          : 'SUCCESS';
    const html = `${d.url}/${r.owner}/${r.name}`;
    const contexts: View[] = [
      ...runs.map((c) => ({
        __typename: 'CheckRun',
        id: c.nodeId,
        databaseId: c.id,
        name: c.name,
        status: c.status.toUpperCase(),
        conclusion: c.conclusion === null ? null : c.conclusion.toUpperCase(),
        startedAt: c.startedAt,
        completedAt: c.completedAt,
        detailsUrl: c.detailsUrl,
        externalId: c.externalId,
        title: c.title,
        summary: c.summary,
        text: null,
        url: `${html}/runs/${c.id}`,
        permalink: `${html}/runs/${c.id}`,
        resourcePath: `/${r.owner}/${r.name}/runs/${c.id}`,
      })),
      ...statuses.map((s) => ({
        __typename: 'StatusContext',
        id: s.nodeId,
        context: s.context,
        state: s.state.toUpperCase(),
        description: s.description,
        targetUrl: s.targetUrl,
        createdAt: s.createdAt,
      })),
    ];
    return {
      __typename: 'StatusCheckRollup',
      id: Buffer.from(`rollup:${r.key}:${sha}`).toString('base64'),
      state,
      contexts: (args: Args) => ({
        ...connection(contexts, args, 'contexts'),
        checkRunCount: runs.length,
        statusContextCount: statuses.length,
      }),
    };
  }

  issueView(r: RepoRec, i: IssueRec): View {
    const d = this.double;
    const subs = (): { repo: RepoRec; issue: IssueRec }[] =>
      i.subIssueIds.flatMap((id) => {
        const f = d.issueById(id);
        return f ? [f] : [];
      });
    const author = d.user(i.author);
    return {
      __typename: i.pull ? 'PullRequest' : 'Issue',
      id: i.nodeId,
      databaseId: i.id,
      fullDatabaseId: String(i.id),
      number: i.number,
      title: i.title,
      body: i.body ?? '',
      url: `${d.url}/${r.owner}/${r.name}/${i.pull ? 'pull' : 'issues'}/${i.number}`,
      state: i.pull?.merged ? 'MERGED' : i.state === 'open' ? 'OPEN' : 'CLOSED',
      closed: i.state === 'closed',
      isDraft: i.pull?.draft ?? false,
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
      closedAt: i.closedAt,
      author: {
        __typename: author.type === 'Bot' ? 'Bot' : 'User',
        login: author.login,
        url: `${d.url}/${author.login}`,
        avatarUrl: `${d.url}/avatars/u/${author.id}`,
        resourcePath: `/${author.login}`,
      },
      repository: () => this.repoView(r),
      parent: () => {
        const p = i.parentId === null ? undefined : d.issueById(i.parentId);
        return p ? this.issueView(p.repo, p.issue) : null;
      },
      labels: (args: Args) =>
        connection(
          i.labels.map((name) => {
            const l = r.labels.get(name.toLowerCase());
            return {
              __typename: 'Label',
              id: l?.nodeId ?? `LA_${name}`,
              name,
              color: l?.color ?? 'ededed',
              description: l?.description ?? null,
              isDefault: false,
              url: `${d.url}/${r.owner}/${r.name}/labels/${encodeURIComponent(name)}`,
            };
          }),
          args,
          'labels',
        ),
      subIssues: (args: Args) =>
        connection(
          subs().map((s) => this.issueView(s.repo, s.issue)),
          args,
          'subIssues',
        ),
      subIssuesSummary: () => {
        const all = subs();
        const done = all.filter((s) => s.issue.state === 'closed').length;
        return {
          total: all.length,
          completed: done,
          percentCompleted: all.length === 0 ? 0 : Math.floor((done * 100) / all.length),
        };
      },
      projectItems: (args: Args) =>
        connection(
          d.state.projects.flatMap((p) =>
            p.items.filter((it) => it.contentId === i.nodeId).map((it) => this.itemView(p, it)),
          ),
          args,
          'projectItems',
        ),
      // A pull request's commits, oldest first (GitHub lists at most 250).
      ...(i.pull === undefined ? {} : { commits: (args: Args) => this.pullCommits(r, i, args) }),
      // Issue and pull request comments, oldest first (`IssueCommentConnection`).
      comments: (args: Args) =>
        connection(
          r.comments
            .filter((c) => c.issueNumber === i.number)
            .map((c) => {
              const who = d.user(c.author);
              return {
                __typename: 'IssueComment',
                id: c.nodeId,
                databaseId: c.id,
                fullDatabaseId: String(c.id),
                body: c.body,
                createdAt: c.createdAt,
                updatedAt: c.updatedAt,
                url: `${d.url}/${r.owner}/${r.name}/issues/${i.number}#issuecomment-${c.id}`,
                author: {
                  __typename: who.type === 'Bot' ? 'Bot' : 'User',
                  login: who.login,
                  url: `${d.url}/${who.login}`,
                  avatarUrl: `${d.url}/avatars/u/${who.id}`,
                  resourcePath: `/${who.login}`,
                },
              };
            }),
          args,
          'comments',
        ),
    };
  }

  /** `PullRequest.commits`: the head branch's commits not on the base branch. */
  async pullCommits(r: RepoRec, i: IssueRec, args: Args): Promise<View> {
    const git = this.double.git;
    const head = await git.resolveRef(r.dir, `refs/heads/${i.pull?.head ?? ''}`);
    const base = await git.resolveRef(r.dir, `refs/heads/${i.pull?.base ?? ''}`);
    const shas =
      head === undefined || base === undefined
        ? []
        : await git.revList(r.dir, ['--reverse', '--max-count=250', `${base}..${head}`]);
    return connection(
      shas.map((sha) => ({
        __typename: 'PullRequestCommit',
        id: Buffer.from(`prc:${r.key}:${i.number}:${sha}`).toString('base64'),
        url: `${this.double.url}/${r.owner}/${r.name}/pull/${i.number}/commits/${sha}`,
        resourcePath: `/${r.owner}/${r.name}/pull/${i.number}/commits/${sha}`,
        commit: () => this.gitObjectView(r, sha),
      })),
      args,
      'commits',
    );
  }

  projectView(p: ProjectRec): View {
    const d = this.double;
    return {
      __typename: 'ProjectV2',
      id: p.id,
      databaseId: p.databaseId,
      fullDatabaseId: String(p.databaseId),
      number: p.number,
      title: p.title,
      closed: false,
      closedAt: null,
      public: false,
      readme: null,
      shortDescription: null,
      createdAt: p.createdAt,
      updatedAt: p.updatedAt,
      url: `${d.url}/orgs/${p.owner}/projects/${p.number}`,
      resourcePath: `/orgs/${p.owner}/projects/${p.number}`,
      owner: () => this.ownerView(d.user(p.owner)),
      fields: (args: Args) =>
        connection(
          p.fields.map((f) => this.fieldView(p, f)),
          args,
          'fields',
        ),
      field: ({ name }: Args) => {
        const f = p.fields.find((x) => x.name === name);
        return f ? this.fieldView(p, f) : null;
      },
      items: (args: Args) =>
        connection(
          p.items.map((it) => this.itemView(p, it)),
          args,
          'items',
        ),
    };
  }

  fieldView(p: ProjectRec, f: ProjectFieldRec): View {
    return {
      __typename: f.dataType === 'SINGLE_SELECT' ? 'ProjectV2SingleSelectField' : 'ProjectV2Field',
      id: f.id,
      databaseId: f.databaseId,
      name: f.name,
      dataType: f.dataType,
      createdAt: f.createdAt,
      updatedAt: f.createdAt,
      project: () => this.projectView(p),
      options: ({ names }: Args) =>
        f.options
          .filter((o) => !Array.isArray(names) || names.includes(o.name))
          .map((o) => ({
            ...o,
            nameHTML: escapeHtml(o.name),
            descriptionHTML: escapeHtml(o.description),
          })),
    };
  }

  itemView(p: ProjectRec, it: ProjectItemRec): View {
    const valueView = (f: ProjectFieldRec, v: FieldValue): View => {
      const common = {
        id: `PVTFV_${it.databaseId}_${f.databaseId}`,
        createdAt: it.createdAt,
        updatedAt: it.updatedAt,
        field: () => this.fieldView(p, f),
        item: () => this.itemView(p, it),
      };
      if ('singleSelectOptionId' in v) {
        const o = f.options.find((x) => x.id === v.singleSelectOptionId);
        return {
          __typename: 'ProjectV2ItemFieldSingleSelectValue',
          ...common,
          optionId: v.singleSelectOptionId,
          name: o?.name ?? null,
          nameHTML: o ? escapeHtml(o.name) : null,
          color: o?.color ?? 'GRAY',
          description: o?.description ?? null,
          descriptionHTML: o ? escapeHtml(o.description) : null,
        };
      }
      if ('text' in v)
        return { __typename: 'ProjectV2ItemFieldTextValue', ...common, text: v.text };
      if ('number' in v)
        return { __typename: 'ProjectV2ItemFieldNumberValue', ...common, number: v.number };
      return { __typename: 'ProjectV2ItemFieldDateValue', ...common, date: v.date };
    };
    const values = (): View[] =>
      p.fields.flatMap((f) => {
        const v = it.values.get(f.id);
        return v ? [valueView(f, v)] : [];
      });
    const content = this.findContent(it.contentId);
    return {
      __typename: 'ProjectV2Item',
      id: it.id,
      databaseId: it.databaseId,
      fullDatabaseId: String(it.databaseId),
      type: content?.issue.pull ? 'PULL_REQUEST' : 'ISSUE',
      isArchived: false,
      createdAt: it.createdAt,
      updatedAt: it.updatedAt,
      project: () => this.projectView(p),
      content: () => (content ? this.issueView(content.repo, content.issue) : null),
      fieldValueByName: ({ name }: Args) => {
        const f = p.fields.find((x) => x.name === name);
        const v = f ? it.values.get(f.id) : undefined;
        return f && v ? valueView(f, v) : null;
      },
      fieldValues: (args: Args) => connection(values(), args, 'fieldValues'),
    };
  }

  // ---------------------------------------------------------------- mutations

  private addItem(input: Args): View {
    const p = this.findProject(input['projectId']);
    const content = this.need(
      this.findContent(input['contentId']),
      'Issue or PullRequest',
      input['contentId'],
    );
    // GitHub returns the existing item when the content is already on the board.
    let item = p.items.find((it) => it.contentId === content.issue.nodeId);
    if (!item) {
      const id = nextId(this.double.state);
      const t = now();
      item = {
        id: `PVTI_lADO${id}`,
        databaseId: id,
        contentId: content.issue.nodeId,
        values: new Map(),
        createdAt: t,
        updatedAt: t,
      };
      p.items.push(item);
      p.updatedAt = t;
    }
    return { clientMutationId: input['clientMutationId'] ?? null, item: this.itemView(p, item) };
  }

  private updateValue(input: Args): View {
    const p = this.findProject(input['projectId']);
    const item = this.need(
      p.items.find((it) => it.id === input['itemId']),
      'ProjectV2Item',
      input['itemId'],
    );
    const field = this.need(
      p.fields.find((f) => f.id === input['fieldId']),
      'ProjectV2Field',
      input['fieldId'],
    );
    const value = input['value'] as Args;
    const given = Object.keys(value).filter((k) => value[k] !== undefined && value[k] !== null);
    if (given.length !== 1)
      throw new GitHubGraphqlError(
        'UNPROCESSABLE',
        'Exactly one value must be provided for the field.',
      );
    const want: Record<ProjectFieldRec['dataType'], string> = {
      TEXT: 'text',
      NUMBER: 'number',
      DATE: 'date',
      SINGLE_SELECT: 'singleSelectOptionId',
      TITLE: 'text',
    };
    if (given[0] !== want[field.dataType]) {
      throw new GitHubGraphqlError(
        'UNPROCESSABLE',
        `Field ${field.name} has type ${field.dataType}; ${String(given[0])} cannot be set on it.`,
      );
    }
    if (
      field.dataType === 'SINGLE_SELECT' &&
      !field.options.some((o) => o.id === value['singleSelectOptionId'])
    ) {
      throw new GitHubGraphqlError(
        'UNPROCESSABLE',
        `The single select option Id does not belong to the field ${field.name}.`,
      );
    }
    item.values.set(field.id, {
      [want[field.dataType]]: value[want[field.dataType]],
    } as FieldValue);
    item.updatedAt = now();
    return {
      clientMutationId: input['clientMutationId'] ?? null,
      projectV2Item: this.itemView(p, item),
    };
  }

  private createField(input: Args): View {
    const p = this.findProject(input['projectId']);
    const name = String(input['name']);
    if (p.fields.some((f) => f.name.toLowerCase() === name.toLowerCase())) {
      throw new GitHubGraphqlError('UNPROCESSABLE', 'Name has already been taken');
    }
    const dataType = String(input['dataType']) as ProjectFieldRec['dataType'];
    if (dataType === 'SINGLE_SELECT' && !Array.isArray(input['singleSelectOptions'])) {
      throw new GitHubGraphqlError(
        'UNPROCESSABLE',
        'Single select options must be provided for a single select field.',
      );
    }
    const field = addField(
      this.double,
      p,
      name,
      dataType,
      (input['singleSelectOptions'] as
        { name: string; color: string; description: string }[] | undefined) ?? [],
    );
    return {
      clientMutationId: input['clientMutationId'] ?? null,
      projectV2Field: this.fieldView(p, field),
    };
  }

  /**
   * Renames a field and/or replaces a single-select field's options. As on GitHub, a non-empty
   * option list overwrites the old one whole: every option gets a new id, and the items' values
   * that pointed to an option no longer there are cleared.
   */
  private updateField(input: Args): View {
    const found = this.double.state.projects.flatMap((p) =>
      p.fields.filter((f) => f.id === input['fieldId']).map((f) => ({ p, f })),
    )[0];
    const { p, f: field } = this.need(found, 'ProjectV2Field', input['fieldId']);
    const options = (input['singleSelectOptions'] as OptionInput[] | null | undefined) ?? [];
    if (options.length > 0 && field.dataType !== 'SINGLE_SELECT') {
      throw new GitHubGraphqlError(
        'UNPROCESSABLE',
        `Single select options can only be set on a single select field; ${field.name} has type ${field.dataType}.`,
      );
    }
    const name = input['name'];
    if (typeof name === 'string' && name.toLowerCase() !== field.name.toLowerCase()) {
      if (p.fields.some((f) => f.name.toLowerCase() === name.toLowerCase()))
        throw new GitHubGraphqlError('UNPROCESSABLE', 'Name has already been taken');
    }
    if (typeof name === 'string') field.name = name;
    if (options.length > 0) {
      field.options = freshOptions(this.double, options);
      const kept = new Set(field.options.map((o) => o.id));
      for (const item of p.items) {
        const v = item.values.get(field.id);
        if (v && 'singleSelectOptionId' in v && !kept.has(v.singleSelectOptionId)) {
          item.values.delete(field.id);
          item.updatedAt = now();
        }
      }
    }
    p.updatedAt = now();
    return {
      clientMutationId: input['clientMutationId'] ?? null,
      projectV2Field: this.fieldView(p, field),
    };
  }

  /** `markPullRequestReadyForReview`, or with `draft` `convertPullRequestToDraft`. */
  private markReady(input: Args, draft = false): View {
    const found = this.need(
      this.findContent(input['pullRequestId']),
      'PullRequest',
      input['pullRequestId'],
    );
    if (!found.issue.pull)
      throw new GitHubGraphqlError(
        'NOT_FOUND',
        `Could not resolve to a PullRequest with the global id of '${String(input['pullRequestId'])}'.`,
      );
    found.issue.pull.draft = draft;
    found.issue.updatedAt = now();
    return {
      clientMutationId: input['clientMutationId'] ?? null,
      pullRequest: this.issueView(found.repo, found.issue),
    };
  }

  private addSubIssue(input: Args, actor: UserRec): View {
    const parent = this.need(this.findContent(input['issueId']), 'Issue', input['issueId']);
    const child = this.need(this.findContent(input['subIssueId']), 'Issue', input['subIssueId']);
    if (
      child.issue.parentId !== null &&
      child.issue.parentId !== parent.issue.id &&
      input['replaceParent'] !== true
    ) {
      throw new GitHubGraphqlError('UNPROCESSABLE', 'Sub issue may only have one parent');
    }
    if (!parent.issue.subIssueIds.includes(child.issue.id))
      parent.issue.subIssueIds.push(child.issue.id);
    child.issue.parentId = parent.issue.id;
    void actor;
    return {
      clientMutationId: input['clientMutationId'] ?? null,
      issue: this.issueView(parent.repo, parent.issue),
      subIssue: this.issueView(child.repo, child.issue),
    };
  }
}

/** Adds a field to a board; single-select option ids are fresh, as GitHub's are. */
export function addField(
  double: Double,
  p: ProjectRec,
  name: string,
  dataType: ProjectFieldRec['dataType'],
  options: readonly OptionInput[],
): ProjectFieldRec {
  const id = nextId(double.state);
  const field: ProjectFieldRec = {
    id: dataType === 'SINGLE_SELECT' ? `PVTSSF_lADO${id}` : `PVTF_lADO${id}`,
    databaseId: id,
    name,
    dataType,
    options: freshOptions(double, options),
    createdAt: now(),
  };
  p.fields.push(field);
  p.updatedAt = now();
  return field;
}

/** Single-select options with ids never used before (GitHub's are 8 hex digits). */
function freshOptions(double: Double, options: readonly OptionInput[]): ProjectOptionRec[] {
  const base = nextId(double.state);
  return options.map((o, i) => ({
    id: (base * 100 + i).toString(16).padStart(8, '0'),
    name: o.name,
    color: o.color ?? COLORS[i % COLORS.length] ?? 'GRAY',
    description: o.description ?? '',
  }));
}
