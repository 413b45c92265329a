/**
 * The GitHub double: one HTTP server on 127.0.0.1 serving REST (checked against GitHub's
 * OpenAPI description), GraphQL (checked against GitHub's schema), git over smart HTTP,
 * and sending webhooks. Tests drive it through `seed`, `act`, `state`, `faults`, `stats`.
 */
import { createPublicKey, randomBytes, verify as verifySignature } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError, type Json, type Reply, type RestContext, type RouteTable } from './context.js';
import { createClock, type ClockImpl, type ClockOptions } from './clock.js';
import {
  CONTENT_CREATING,
  Faults,
  newStats,
  type FaultSpec,
  type Stats,
  type TokenStats,
} from './faults.js';
import { Fixtures } from './fixtures.js';
import type { GitStore } from './git.js';
import { bodyOf, type Identity } from './git.js';
import { GraphqlEndpoint } from './graphql.js';
import { PushHolds, refsOfPush } from './push-holds.js';
import { routes } from './routes/index.js';
import { formatAjvErrors, restSpec, type SpecOperation } from './spec.js';
import {
  newState,
  nextId,
  now,
  repoKey,
  type DoubleState,
  type IssueRec,
  type DispatchRec,
  type Permission,
  type RepoRec,
  type UserRec,
} from './state.js';
import { Webhooks, type WebhookTarget } from './webhooks.js';
import { isTolerated } from './exceptions.js';
import {
  githubRequestId,
  Limits,
  PRIMARY_DOC_URL,
  secondaryBody,
  type Account,
  type LimitOptions,
  type Refusal,
} from './limits.js';

export interface Violation {
  readonly kind: 'request' | 'response' | 'unknown-route' | 'graphql' | 'webhook';
  /** operationId, `graphql <name>` or `webhook <event.action>`. */
  readonly operation: string;
  readonly message: string;
}

export interface DoubleOptions {
  /** Contract checks of requests, responses, GraphQL and webhooks (default true). */
  readonly contract?: boolean;
  /** Where webhooks go; can also be set later with `gh.setWebhookTarget`. */
  readonly webhook?: WebhookTarget;
  /** Primary rate limit reported in `x-ratelimit-*` while not enforced (default 5000). */
  readonly rateLimit?: number;
  /**
   * Enforce a content-creation cap per minute (no hourly cap); off by default. Older form of
   * `limits: { contentCreation: { perMinute, perHour: Infinity } }`.
   */
  readonly contentCreationPerMinute?: number;
  /**
   * GitHub's rate limits, enforced and answered as GitHub answers them; each off unless
   * given. `true` turns every one on with GitHub's numbers (see `limits.ts`).
   */
  readonly limits?: LimitOptions | true;
  /** What the limits' windows and waits run on (default `real`; see `clock.ts`). */
  readonly clock?: ClockOptions;
}

const DOC_URL = 'https://docs.github.com/rest';

export class Double {
  readonly state: DoubleState = newState();
  readonly violations: Violation[] = [];
  readonly stats: Stats = newStats();
  readonly faults = new Faults();
  readonly webhooks: Webhooks;
  readonly graphql: GraphqlEndpoint;
  readonly contract: boolean;
  fixtures!: Fixtures;
  url = '';
  readonly clock: ClockImpl;
  readonly limits: Limits;
  /** Called with each `workflow_dispatch` as it is recorded (benchmarks start jobs from it). */
  readonly dispatchListeners: ((d: DispatchRec) => void)[] = [];
  private server: Server | undefined;
  private readonly table: RouteTable;
  private readonly pushHolds = new PushHolds();
  private inFlight = 0;

  constructor(
    readonly git: GitStore,
    options: DoubleOptions,
  ) {
    this.contract = options.contract ?? true;
    this.limits = new Limits(options.limits, options.rateLimit ?? 5000, {
      ...(options.contentCreationPerMinute === undefined
        ? {}
        : { contentCreationPerMinute: options.contentCreationPerMinute }),
    });
    this.webhooks = new Webhooks(
      424242,
      () => this.state.app?.id ?? 0,
      (operation, message) => this.violation('webhook', operation, message),
      () => {
        this.stats.webhookDeliveries += 1;
      },
      () => this.clock.touch(),
    );
    this.clock = createClock(options.clock, {
      inFlight: () => this.inFlight + this.webhooks.inFlight,
    });
    this.webhooks.target = options.webhook;
    this.graphql = new GraphqlEndpoint(this);
    this.table = routes;
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        // A bug in the double itself: fail the test that met it, loudly.
        this.violation(
          'response',
          `${req.method ?? ''} ${req.url ?? ''}`,
          `github-double crashed: ${(e as Error).message}`,
        );
        if (!res.headersSent) {
          res.statusCode = 500;
          res.setHeader('content-type', 'application/json');
        }
        res.end(JSON.stringify({ message: `github-double internal error: ${(e as Error).stack}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.fixtures = new Fixtures(restSpec(), this.url);
  }

  async close(): Promise<void> {
    await this.webhooks.idle();
    this.clock.stop();
    const server = this.server;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await this.git.dispose();
  }

  /** Whom GitHub counts a request against (see `limits.ts`). */
  accountOf(auth: {
    auth: RestContext['auth'];
    actor: UserRec | undefined;
    token?: string;
  }): Account {
    const open = (key: string): Account => ({
      key,
      kind: 'user',
      id: 0,
      actions: false,
      limited: false,
    });
    if (auth.auth === 'anonymous' || !auth.actor) return open('anonymous');
    if (auth.auth === 'app-jwt') return open('app-jwt');
    const kind = auth.token === undefined ? undefined : this.state.tokenKinds.get(auth.token);
    if (kind?.kind === 'installation') {
      const id = kind.installationId;
      return { key: `installation:${id}`, kind: 'installation', id, actions: false, limited: true };
    }
    if (kind?.kind === 'actions') {
      const id = kind.installationId;
      return {
        key: `actions:${kind.repoKey}`,
        kind: 'installation',
        id,
        actions: true,
        limited: true,
      };
    }
    const u = auth.actor;
    return { key: `user:${u.id}`, kind: 'user', id: u.id, actions: false, limited: true };
  }

  /** The counters of one token (`anonymous`, `app-jwt`, `invalid` for requests without one). */
  tokenStats(token: string, login: string, account: string): TokenStats {
    let t = this.stats.byToken[token];
    if (!t) {
      t = {
        login,
        account,
        rest: 0,
        graphql: 0,
        graphqlPoints: 0,
        contentCreating: 0,
        git: 0,
        limitHits: 0,
        operations: {},
      };
      this.stats.byToken[token] = t;
    }
    return t;
  }

  /** Sends a rate limit's answer and notes it in `gh.stats`. */
  refuse(
    res: ServerResponse,
    r: Refusal,
    who: { account: Account; token: string; route: string; ts: TokenStats },
  ): void {
    who.ts.limitHits += 1;
    this.stats.limitHits.push({
      limit: r.limit,
      at: this.clock.now(),
      account: who.account.key,
      token: who.token,
      route: who.route,
      requestId: r.headers['x-github-request-id'] ?? '',
    });
    this.send(res, r.status, r.body, r.headers);
  }

  violation(kind: Violation['kind'], operation: string, message: string): void {
    if (isTolerated(operation, message)) return;
    this.violations.push({ kind, operation, message });
  }

  // ---------------------------------------------------------------- lookups

  user(login: string): UserRec {
    const u = this.state.users.get(login.toLowerCase());
    if (u) return u;
    return this.addUser(login, 'User', 'none');
  }

  addUser(login: string, type: UserRec['type'], permission: Permission): UserRec {
    const id = nextId(this.state);
    const prefix = type === 'Organization' ? 'O' : type === 'Bot' ? 'BOT' : 'U';
    const u: UserRec = {
      login,
      id,
      nodeId: `${prefix}_kgDO${id}`,
      type,
      permission,
      token: `ghp_double${randomBytes(12).toString('hex')}`,
    };
    this.state.users.set(login.toLowerCase(), u);
    this.state.tokens.set(u.token, u);
    return u;
  }

  repo(owner: string, name: string): RepoRec {
    const r = this.state.repos.get(repoKey(owner, name));
    if (!r) throw new HttpError(404, 'Not Found');
    return r;
  }

  issue(repo: RepoRec, n: number): IssueRec {
    const i = repo.issues.get(n);
    if (!i) throw new HttpError(404, 'Not Found');
    return i;
  }

  issueById(id: number): { repo: RepoRec; issue: IssueRec } | undefined {
    for (const repo of this.state.repos.values()) {
      for (const issue of repo.issues.values()) if (issue.id === id) return { repo, issue };
    }
    return undefined;
  }

  permissionOf(repo: RepoRec, u: UserRec | undefined): Permission {
    if (!u) return repo.private ? 'none' : 'read';
    if (u.login.toLowerCase() === repo.owner.toLowerCase()) return 'admin';
    if (u.type === 'Bot' && this.state.app?.bot === u) return 'admin';
    return repo.permissions.get(u.login.toLowerCase()) ?? u.permission;
  }

  /** GitHub answers 404 (not 403) when the caller cannot see the repository. */
  requireWrite(repo: RepoRec, u: UserRec | undefined): UserRec {
    if (!u) throw new HttpError(401, 'Requires authentication');
    const p = this.permissionOf(repo, u);
    if (p === 'none') throw new HttpError(404, 'Not Found');
    if (p === 'read' || p === 'triage') {
      throw new HttpError(403, 'Resource not accessible by integration');
    }
    return u;
  }

  identity(u: UserRec): Identity {
    return { name: u.login, email: `${u.id}+${u.login}@users.noreply.github.com` };
  }

  issueJson(repo: RepoRec, i: IssueRec): Json {
    const subs = i.subIssueIds.map((id) => this.issueById(id)?.issue);
    let blocking = 0;
    for (const r of this.state.repos.values()) {
      for (const other of r.issues.values()) if (other.blockedByIds.includes(i.id)) blocking += 1;
    }
    return this.fixtures.issue(repo, i, (l) => this.user(l), {
      comments: repo.comments.filter((c) => c.issueNumber === i.number).length,
      subCompleted: subs.filter((s) => s?.state === 'closed').length,
      blockedBy: i.blockedByIds.length,
      blocking,
    });
  }

  repoJson(repo: RepoRec, viewer?: UserRec): Json {
    return this.fixtures.repo(repo, this.user(repo.owner), this.permissionOf(repo, viewer));
  }

  installationFor(owner: string): { id: number; account: string } {
    let inst = this.state.installations.get(owner.toLowerCase());
    if (!inst) {
      inst = { id: nextId(this.state), account: owner };
      this.state.installations.set(owner.toLowerCase(), inst);
    }
    return inst;
  }

  /** Fields every webhook carries: repository, sender, installation, organization. */
  hookContext(repo: RepoRec, sender: UserRec): Json {
    const owner = this.user(repo.owner);
    const fields: Json = {
      repository: this.repoJson(repo),
      sender: this.fixtures.user(sender),
    };
    if (this.state.app) {
      fields['installation'] = {
        id: this.installationFor(repo.owner).id,
        node_id: `MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u${this.installationFor(repo.owner).id}`,
      };
    }
    if (owner.type === 'Organization') {
      const api = `${this.url}/orgs/${owner.login}`;
      fields['organization'] = {
        login: owner.login,
        id: owner.id,
        node_id: owner.nodeId,
        url: api,
        repos_url: `${api}/repos`,
        events_url: `${api}/events`,
        hooks_url: `${api}/hooks`,
        issues_url: `${api}/issues`,
        members_url: `${api}/members{/member}`,
        public_members_url: `${api}/public_members{/member}`,
        avatar_url: `${this.url}/avatars/u/${owner.id}`,
        description: null,
      };
    }
    return fields;
  }

  emit(event: string, action: string | undefined, fields: Json): void {
    void this.webhooks.emit(event, action, fields);
  }

  /** See `GitHubDouble.holdPushes`. */
  holdPushes(ref: string, count: number): void {
    this.pushHolds.hold(ref, count);
  }

  /** Run `fn` while holding the repository's write lock (git writes are read-modify-write). */
  async withRepoLock<T>(repo: RepoRec, fn: () => Promise<T>): Promise<T> {
    const prev = repo.lock;
    let release!: () => void;
    repo.lock = new Promise<void>((r) => (release = r));
    await prev.catch(() => undefined);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.inFlight += 1;
    this.clock.touch();
    try {
      await this.route(req, res);
    } finally {
      this.inFlight -= 1;
      this.clock.touch();
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.stats.requests += 1;
    const url = new URL(req.url ?? '/', this.url);
    const gitMatch = /^\/([^/]+)\/([^/]+?\.git)(\/.*)$/.exec(url.pathname);
    if (gitMatch) return this.handleGit(req, res, url, gitMatch);
    const body = await readBody(req);
    if (req.method === 'POST' && url.pathname === '/graphql') {
      return this.graphql.handle(req, res, body);
    }
    return this.handleRest(req, res, url, body);
  }

  private async handleGit(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    m: RegExpExecArray,
  ): Promise<void> {
    this.stats.gitRequests += 1;
    const owner = m[1] ?? '';
    const name = (m[2] ?? '').replace(/\.git$/, '');
    const repo = this.state.repos.get(repoKey(owner, name));
    const user = this.basicAuthUser(req.headers.authorization);
    const token = user ? (this.tokenOf(req.headers.authorization) ?? 'invalid') : 'invalid';
    const auth = user
      ? { auth: 'token' as const, actor: user, token }
      : { auth: 'anonymous' as const, actor: undefined };
    this.tokenStats(token, user?.login ?? '', this.accountOf(auth).key).git += 1;
    const deny = (status: number, message: string): void => {
      res.statusCode = status;
      if (status === 401) res.setHeader('www-authenticate', 'Basic realm="GitHub"');
      res.end(`${message}\n`);
    };
    if (!user) return deny(401, 'Invalid username or token.');
    if (!repo) return deny(404, 'Repository not found.');
    const push =
      url.searchParams.get('service') === 'git-receive-pack' ||
      url.pathname.endsWith('/git-receive-pack');
    const p = this.permissionOf(repo, user);
    if (p === 'none') return deny(404, 'Repository not found.');
    if (push && (p === 'read' || p === 'triage')) {
      return deny(403, `Permission to ${repo.owner}/${repo.name}.git denied to ${user.login}.`);
    }
    const pathInfo = `/${repo.owner}/${repo.name}.git${m[3] ?? ''}`;
    let body: Buffer | undefined;
    if (push && req.method === 'POST' && this.pushHolds.active) {
      body = await bodyOf(req);
      const encoding = req.headers['content-encoding'];
      await this.pushHolds.pass(
        refsOfPush(body, typeof encoding === 'string' ? encoding : undefined),
      );
    }
    const run = (): Promise<void> =>
      this.git.serveHttp(req, res, pathInfo, url.search.replace(/^\?/, ''), user.login, body);
    // Pushes take the same lock as REST writes so ref updates never interleave.
    await (push && req.method === 'POST' ? this.withRepoLock(repo, run) : run());
  }

  /** The token of an `Authorization` header (Basic with the token as password, Bearer, token). */
  private tokenOf(header: string | undefined): string | undefined {
    if (!header) return undefined;
    const [scheme = '', value = ''] = header.split(' ');
    if (scheme.toLowerCase() === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      return decoded.slice(decoded.indexOf(':') + 1);
    }
    return /^(token|bearer)$/i.test(scheme) ? value : undefined;
  }

  private basicAuthUser(header: string | undefined): UserRec | undefined {
    if (!header) return undefined;
    const [scheme, value = ''] = header.split(' ');
    if (scheme?.toLowerCase() === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      return this.tokenUser(decoded.slice(decoded.indexOf(':') + 1));
    }
    if (scheme?.toLowerCase() === 'bearer' || scheme?.toLowerCase() === 'token') {
      return this.tokenUser(value);
    }
    return undefined;
  }

  /** A token's user; an expired installation token is as unknown as a wrong one ("Bad credentials"). */
  private tokenUser(token: string): UserRec | undefined {
    const expires = this.state.tokenExpiry.get(token);
    if (expires !== undefined && expires <= Date.now()) return undefined;
    return this.state.tokens.get(token);
  }

  /** Who is calling: a token's user, an app (JWT), anonymous, or an error answer. */
  authenticate(
    header: string | undefined,
  ): { auth: RestContext['auth']; actor: UserRec | undefined; token?: string } | HttpError {
    if (!header) return { auth: 'anonymous', actor: undefined };
    const [scheme = '', value = ''] = header.split(' ');
    if (!/^(token|bearer)$/i.test(scheme)) return new HttpError(401, 'Bad credentials');
    if (value.split('.').length === 3 && value.startsWith('eyJ')) {
      const problem = this.verifyAppJwt(value);
      return problem === undefined
        ? { auth: 'app-jwt', actor: undefined }
        : new HttpError(401, problem);
    }
    const actor = this.tokenUser(value);
    return actor ? { auth: 'token', actor, token: value } : new HttpError(401, 'Bad credentials');
  }

  /** Checks an app JWT (RS256, `iss` = app id, unexpired), as GitHub does. */
  private verifyAppJwt(jwt: string): string | undefined {
    const app = this.state.app;
    if (!app) return 'A JSON web token could not be decoded';
    const [h = '', p = '', s = ''] = jwt.split('.');
    try {
      const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Json;
      const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Json;
      if (header['alg'] !== 'RS256') return "'alg' must be RS256";
      if (String(payload['iss']) !== String(app.id)) {
        return `'Issuer' claim ('iss') must be an Integer or the app's Client ID`;
      }
      if (typeof payload['exp'] !== 'number' || payload['exp'] * 1000 < Date.now()) {
        return "'Expiration time' claim ('exp') is too far in the future or in the past";
      }
      if (app.publicKey) {
        const ok = verifySignature(
          'RSA-SHA256',
          Buffer.from(`${h}.${p}`),
          createPublicKey(app.publicKey),
          Buffer.from(s, 'base64url'),
        );
        if (!ok) return 'A JSON web token could not be decoded';
      }
      return undefined;
    } catch {
      return 'A JSON web token could not be decoded';
    }
  }

  private async handleRest(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: Buffer,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const spec = restSpec();
    const match = spec.match(method, url.pathname);
    if (!match || 'pathOnly' in match) {
      const what = match
        ? `${method} is not an operation of ${match.pathOnly}`
        : `no path in GitHub's OpenAPI description matches ${url.pathname}`;
      this.violation('unknown-route', `${method} ${url.pathname}`, what);
      return this.send(
        res,
        404,
        {
          message: `Not Found (github-double: ${what})`,
          documentation_url: DOC_URL,
          status: '404',
        },
        {},
      );
    }
    const { operation, params } = match;
    const id = operation.operationId;
    this.stats.rest[id] = (this.stats.rest[id] ?? 0) + 1;
    const routeNames = [`${method} ${operation.template}`, id];
    const auth = this.authenticate(req.headers.authorization);
    const account =
      auth instanceof HttpError
        ? this.accountOf({ auth: 'anonymous', actor: undefined })
        : this.accountOf(auth);
    const token = auth instanceof HttpError ? 'invalid' : (auth.token ?? auth.auth);
    const ts = this.tokenStats(
      token,
      auth instanceof HttpError ? '' : (auth.actor?.login ?? ''),
      account.key,
    );
    ts.rest += 1;
    ts.operations[id] = (ts.operations[id] ?? 0) + 1;
    const creates = CONTENT_CREATING.has(id);
    if (creates) {
      this.stats.contentCreating += 1;
      this.stats.contentCreatingRequests += 1;
      ts.contentCreating += 1;
    }
    // Secondary limits first: GitHub's answer to one carries no x-ratelimit-* headers.
    const now = this.clock.now();
    const route = `${method} ${operation.template}`;
    const points = method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 1 : 5;
    const secondary = this.limits.secondary(account, { resource: 'core', points, creates }, now);
    const who = { account, token, route, ts };
    if (secondary !== undefined) {
      return this.refuse(res, this.limits.secondaryRefusal(secondary, 'core', now), who);
    }
    const charged = this.limits.charge(account, 'core', 1, now);
    if (!charged.ok) {
      return this.refuse(res, this.limits.primaryRefusal(account, charged.state, now), who);
    }
    const rateHeaders = Limits.headers(charged.state, 'core');
    const fault = await this.applyFault(res, routeNames, rateHeaders, account);
    if (fault) return;

    let body: Json = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8')) as Json;
      } catch {
        return this.send(
          res,
          400,
          { message: 'Problems parsing JSON', documentation_url: DOC_URL, status: '400' },
          rateHeaders,
        );
      }
    }
    if (this.contract) {
      const problem = this.checkRequest(operation, raw.length > 0, body);
      if (problem) {
        this.violation('request', id, problem);
        return this.send(
          res,
          422,
          {
            message: `Invalid request to ${id} (${method} ${operation.template}): ${problem}`,
            documentation_url: DOC_URL,
            status: '422',
          },
          rateHeaders,
        );
      }
    }
    if (auth instanceof HttpError) {
      return this.send(
        res,
        auth.status,
        { message: auth.message, documentation_url: DOC_URL, status: String(auth.status) },
        rateHeaders,
        operation,
      );
    }
    if (auth.auth === 'app-jwt' && !id.startsWith('apps/')) {
      return this.send(
        res,
        401,
        {
          message:
            'A JSON web token cannot be used to access this resource; use an installation token.',
          documentation_url: DOC_URL,
          status: '401',
        },
        rateHeaders,
        operation,
      );
    }
    const handler = this.table[`${method} ${operation.template}`];
    if (!handler) {
      this.violation(
        'unknown-route',
        id,
        `${method} ${operation.template} is in GitHub's description but not implemented by the double`,
      );
      return this.send(
        res,
        404,
        {
          message: `Not Found (github-double does not implement ${id})`,
          documentation_url: DOC_URL,
          status: '404',
        },
        rateHeaders,
      );
    }
    let reply: Reply;
    try {
      reply = await handler({
        double: this,
        operationId: id,
        params,
        query: url.searchParams,
        body,
        actor: auth.actor,
        auth: auth.auth,
        viaApp: account.kind === 'installation',
        url,
      });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      reply = {
        status: e.status,
        body: { message: e.message, documentation_url: DOC_URL, status: String(e.status) },
        headers: e.headers,
      };
    }
    return this.send(
      res,
      reply.status,
      reply.body,
      { ...rateHeaders, ...reply.headers },
      operation,
    );
  }

  private checkRequest(operation: SpecOperation, hasBody: boolean, body: Json): string | undefined {
    const spec = restSpec();
    const validate = spec.requestValidator(operation);
    if (!validate) return undefined;
    if (!hasBody)
      return spec.requestBodyRequired(operation) ? 'a JSON request body is required' : undefined;
    return validate(body) ? undefined : `request body: ${formatAjvErrors(validate.errors)}`;
  }

  /** Applies an injected fault; true when the request is answered (or dropped) by it. */
  async applyFault(
    res: ServerResponse,
    names: readonly string[],
    headers: Record<string, string>,
    account: Account,
  ): Promise<boolean> {
    const f: FaultSpec | undefined = this.faults.take(names);
    if (!f) return false;
    if (f.latencyMs) await new Promise((r) => setTimeout(r, f.latencyMs));
    if (f.drop) {
      res.socket?.destroy();
      return true;
    }
    if (f.status === undefined && f.kind === undefined) return false;
    const status = f.status ?? 403;
    const now = this.clock.now();
    const id = githubRequestId(now);
    if (f.kind === 'secondary-rate-limit') {
      // As GitHub answers one: retry-after, no x-ratelimit-* headers.
      const body = secondaryBody(id);
      this.send(res, status, f.message === undefined ? body : { ...body, message: f.message }, {
        'retry-after': String(f.retryAfterSeconds ?? 60),
        'x-github-request-id': id,
      });
      return true;
    }
    if (f.kind === 'primary-rate-limit') {
      const limit = headers['x-ratelimit-limit'] ?? '5000';
      const who = account.limited ? `${account.kind} ID ${account.id}` : 'installation ID 1';
      this.send(
        res,
        status,
        {
          message:
            f.message ??
            `API rate limit exceeded for ${who}. If you reach out to GitHub Support for help, ` +
              `please include the request ID ${id} and timestamp ` +
              `${new Date(now).toISOString().slice(0, 19).replace('T', ' ')} UTC.`,
          documentation_url: PRIMARY_DOC_URL,
        },
        {
          ...headers,
          'x-ratelimit-remaining': '0',
          'x-ratelimit-used': limit,
          'x-github-request-id': id,
        },
      );
      return true;
    }
    const h: Record<string, string> = { ...headers };
    if (f.retryAfterSeconds !== undefined) h['retry-after'] = String(f.retryAfterSeconds);
    const message = f.message ?? `github-double injected fault (${status})`;
    this.send(res, status, { message, documentation_url: DOC_URL, status: String(status) }, h);
    return true;
  }

  /** Sends a JSON answer; with `operation`, validates it against the spec first. */
  send(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string>,
    operation?: SpecOperation,
  ): void {
    let outStatus = status;
    let outBody = body;
    if (operation && this.contract) {
      const validate = restSpec().responseValidator(operation, status);
      let problem: string | undefined;
      if (validate === undefined) {
        problem = `status ${status} is not a documented response`;
      } else if (validate && !validate(body)) {
        problem = `response ${status}: ${formatAjvErrors(validate.errors)}`;
      }
      if (problem && !isTolerated(operation.operationId, problem)) {
        this.violation('response', operation.operationId, problem);
        outStatus = 500;
        outBody = {
          message: `github-double answered ${operation.operationId} off-contract: ${problem}`,
          status: '500',
        };
      }
    }
    res.statusCode = outStatus;
    this.stats.statuses[outStatus] = (this.stats.statuses[outStatus] ?? 0) + 1;
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (headers['x-github-request-id'] === undefined) {
      res.setHeader('x-github-request-id', githubRequestId(this.clock.now()));
    }
    if (outBody === undefined) {
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(outBody));
  }

  // ---------------------------------------------------------------- used by seed / act

  newIssue(
    repo: RepoRec,
    author: UserRec,
    fields: { title: string; body?: string | null; labels?: readonly string[] },
  ): IssueRec {
    const id = nextId(this.state);
    const t = now();
    const issue: IssueRec = {
      repoKey: repo.key,
      id,
      nodeId: `I_kwDO${id}`,
      number: repo.nextNumber++,
      title: fields.title,
      body: fields.body ?? null,
      state: 'open',
      stateReason: null,
      labels: [],
      assignees: [],
      author: author.login,
      createdAt: t,
      updatedAt: t,
      closedAt: null,
      closedBy: null,
      parentId: null,
      subIssueIds: [],
      blockedByIds: [],
    };
    for (const l of fields.labels ?? []) issue.labels.push(this.ensureLabel(repo, l).name);
    repo.issues.set(issue.number, issue);
    return issue;
  }

  ensureLabel(repo: RepoRec, name: string, color = 'ededed', description: string | null = null) {
    let l = repo.labels.get(name.toLowerCase());
    if (!l) {
      const id = nextId(this.state);
      l = { id, nodeId: `LA_kwDO${id}`, name, color, description };
      repo.labels.set(name.toLowerCase(), l);
    }
    return l;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
