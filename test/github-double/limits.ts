/**
 * GitHub's rate limits, counted per account on the double's clock, and answered as GitHub
 * answers them. Each limit is off unless asked for (`startGitHubDouble({ limits })`);
 * the primary counts are always kept, for the `x-ratelimit-*` headers and `rateLimit`.
 *
 * - Primary, per hour: REST requests and GraphQL points (the cost formula in
 *   `graphql-cost.ts`), 5,000 each for a user or an App installation, 1,000 each for a
 *   repository's `GITHUB_TOKEN`. The window opens with the first request counted and resets
 *   an hour later (`x-ratelimit-reset`).
 * - Secondary: at most 80 content-creating requests a minute and 500 an hour (REST and
 *   GraphQL together); at most 900 REST points a minute (GET/HEAD/OPTIONS 1, other methods 5)
 *   and 2,000 GraphQL points a minute (1 for a query, 5 for a mutation). Sliding windows.
 *
 * Who is counted: the token's account — a user (all their tokens), an App installation (all
 * its installation tokens) or, for a `GITHUB_TOKEN`, its repository. A request refused by a
 * limit counts against none of them.
 */
import { randomBytes } from 'node:crypto';
import type { Json } from './context.js';

/** Whom GitHub counts a request against. */
export interface Account {
  /** `user:<id>`, `installation:<id>`, `actions:<owner/repo>`, `anonymous`, `app-jwt`. */
  readonly key: string;
  /** How GitHub's messages name it: "user ID 12", "installation ID 34". */
  readonly kind: 'user' | 'installation';
  readonly id: number;
  /** A repository's `GITHUB_TOKEN` (1,000 an hour). */
  readonly actions: boolean;
  /** Requests of anonymous callers and app JWTs are never limited by the double. */
  readonly limited: boolean;
}

export type LimitName =
  | 'primary-rest'
  | 'primary-graphql'
  | 'content-creation-per-minute'
  | 'content-creation-per-hour'
  | 'rest-points-per-minute'
  | 'graphql-points-per-minute';

export interface LimitOptions {
  /** Primary REST limit per hour: `true` for GitHub's (5,000; `GITHUB_TOKEN` 1,000). */
  readonly rest?: boolean | { readonly perHour?: number; readonly actionsPerHour?: number };
  /** Primary GraphQL points per hour: `true` for GitHub's (5,000; `GITHUB_TOKEN` 1,000). */
  readonly graphql?: boolean | { readonly perHour?: number; readonly actionsPerHour?: number };
  /** Content-creating requests: `true` for GitHub's 80 a minute and 500 an hour. */
  readonly contentCreation?: boolean | { readonly perMinute?: number; readonly perHour?: number };
  /** REST points a minute: `true` for GitHub's 900. */
  readonly restPoints?: boolean | { readonly perMinute?: number };
  /** GraphQL points a minute (secondary): `true` for GitHub's 2,000. */
  readonly graphqlPoints?: boolean | { readonly perMinute?: number };
  /** Status of a refused REST request: 403 (default; what GitHub sends most) or 429. */
  readonly status?: 403 | 429;
}

interface Resolved {
  readonly rest?: { readonly perHour: number; readonly actionsPerHour: number };
  readonly graphql?: { readonly perHour: number; readonly actionsPerHour: number };
  readonly contentCreation?: { readonly perMinute: number; readonly perHour: number };
  readonly restPoints?: { readonly perMinute: number };
  readonly graphqlPoints?: { readonly perMinute: number };
  readonly status: 403 | 429;
}

const HOUR = 3_600_000;
const MINUTE = 60_000;
/** What GitHub sends in `retry-after` on a secondary limit. */
export const SECONDARY_RETRY_AFTER_SECONDS = 60;

export const PRIMARY_DOC_URL = 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api';
export const SECONDARY_DOC_URL =
  'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';

function resolve(
  options: LimitOptions | true | undefined,
  legacy: { contentCreationPerMinute?: number },
): Resolved {
  const o: LimitOptions =
    options === true
      ? { rest: true, graphql: true, contentCreation: true, restPoints: true, graphqlPoints: true }
      : (options ?? {});
  const pick = <T extends object, D>(v: boolean | T | undefined, d: D): (D & T) | undefined =>
    v === undefined || v === false ? undefined : ({ ...d, ...(v === true ? {} : v) } as D & T);
  const content =
    pick(o.contentCreation, { perMinute: 80, perHour: 500 }) ??
    (legacy.contentCreationPerMinute === undefined
      ? undefined
      : { perMinute: legacy.contentCreationPerMinute, perHour: Infinity });
  return {
    ...spread('rest', pick(o.rest, { perHour: 5000, actionsPerHour: 1000 })),
    ...spread('graphql', pick(o.graphql, { perHour: 5000, actionsPerHour: 1000 })),
    ...spread('contentCreation', content),
    ...spread('restPoints', pick(o.restPoints, { perMinute: 900 })),
    ...spread('graphqlPoints', pick(o.graphqlPoints, { perMinute: 2000 })),
    status: o.status ?? 403,
  };
}

function spread<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

interface Window {
  resetAt: number;
  used: number;
}

export interface PrimaryState {
  readonly limit: number;
  readonly used: number;
  readonly remaining: number;
  /** When the window resets, ms since the epoch (a whole second). */
  readonly resetAt: number;
}

export interface Refusal {
  readonly limit: LimitName;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Json;
}

/** `D24F:221686:28BC1:9F91F:69D56197`: GitHub's request id, the last part the time in hex. */
export function githubRequestId(nowMs: number): string {
  const hex = (bytes: number, len: number): string =>
    randomBytes(bytes).toString('hex').toUpperCase().slice(0, len);
  const time = Math.floor(nowMs / 1000)
    .toString(16)
    .toUpperCase()
    .padStart(8, '0');
  return `${hex(2, 4)}:${hex(3, 6)}:${hex(3, 5)}:${hex(4, 7)}:${time}`;
}

/** `2026-01-31 19:49:07 UTC`, as GitHub's primary-limit message prints the time. */
function timestamp(nowMs: number): string {
  return `${new Date(nowMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function who(a: Account): string {
  return `${a.kind} ID ${a.id}`;
}

export class Limits {
  private readonly config: Resolved;
  private readonly windows = new Map<string, Window>();
  private readonly creations = new Map<string, number[]>();
  private readonly points = new Map<string, { at: number; points: number }[]>();

  constructor(
    options: LimitOptions | true | undefined,
    /** `rateLimit` option: the REST and GraphQL limit reported while not enforced. */
    private readonly reported: number,
    legacy: { contentCreationPerMinute?: number },
  ) {
    this.config = resolve(options, legacy);
  }

  get restStatus(): number {
    return this.config.status;
  }

  private limitOf(account: Account, resource: 'core' | 'graphql'): number {
    const c = resource === 'core' ? this.config.rest : this.config.graphql;
    if (c) return account.actions ? c.actionsPerHour : c.perHour;
    return account.actions ? 1000 : this.reported;
  }

  private enforced(account: Account, resource: 'core' | 'graphql'): boolean {
    return (
      account.limited &&
      (resource === 'core' ? this.config.rest : this.config.graphql) !== undefined
    );
  }

  private window(account: Account, resource: 'core' | 'graphql', now: number): Window {
    const id = `${resource}:${account.key}`;
    let w = this.windows.get(id);
    if (!w || now >= w.resetAt) {
      w = { resetAt: Math.ceil((now + HOUR) / 1000) * 1000, used: 0 };
      this.windows.set(id, w);
    }
    return w;
  }

  /** The window as it stands, without counting anything. */
  peek(account: Account, resource: 'core' | 'graphql', now: number): PrimaryState {
    const w = this.window(account, resource, now);
    const limit = this.limitOf(account, resource);
    return { limit, used: w.used, remaining: Math.max(0, limit - w.used), resetAt: w.resetAt };
  }

  /**
   * Counts `cost` against the primary limit, or refuses. REST refuses the request that would
   * go past the limit; GraphQL refuses once nothing is left (a query may take the last points
   * and more: `used` can pass `limit`, as GitHub reports it).
   */
  charge(
    account: Account,
    resource: 'core' | 'graphql',
    cost: number,
    now: number,
  ): { ok: true; state: PrimaryState } | { ok: false; state: PrimaryState } {
    const w = this.window(account, resource, now);
    const limit = this.limitOf(account, resource);
    if (this.enforced(account, resource)) {
      const refused = resource === 'core' ? w.used + cost > limit : w.used >= limit;
      if (refused) return { ok: false, state: this.peek(account, resource, now) };
    }
    w.used += cost;
    return { ok: true, state: this.peek(account, resource, now) };
  }

  /**
   * The secondary limits a request would break (content creation, points a minute), or
   * undefined after counting it.
   */
  secondary(
    account: Account,
    request: {
      readonly resource: 'core' | 'graphql';
      readonly points: number;
      readonly creates: boolean;
    },
    now: number,
  ): LimitName | undefined {
    if (!account.limited) return undefined;
    const created = this.creations.get(account.key) ?? [];
    while (created.length > 0 && (created[0] ?? 0) <= now - HOUR) created.shift();
    const cc = this.config.contentCreation;
    if (request.creates && cc) {
      const lastMinute = created.filter((t) => t > now - MINUTE).length;
      if (lastMinute + 1 > cc.perMinute) return 'content-creation-per-minute';
      if (created.length + 1 > cc.perHour) return 'content-creation-per-hour';
    }
    const pointsKey = `${request.resource}:${account.key}`;
    const spent = (this.points.get(pointsKey) ?? []).filter((p) => p.at > now - MINUTE);
    const perMinute =
      request.resource === 'core'
        ? this.config.restPoints?.perMinute
        : this.config.graphqlPoints?.perMinute;
    if (perMinute !== undefined) {
      const sum = spent.reduce((n, p) => n + p.points, 0);
      if (sum + request.points > perMinute) {
        return request.resource === 'core' ? 'rest-points-per-minute' : 'graphql-points-per-minute';
      }
    }
    if (request.creates) {
      created.push(now);
      this.creations.set(account.key, created);
    }
    spent.push({ at: now, points: request.points });
    this.points.set(pointsKey, spent);
    return undefined;
  }

  /** The headers every counted answer carries. */
  static headers(state: PrimaryState, resource: 'core' | 'graphql'): Record<string, string> {
    return {
      'x-ratelimit-limit': String(state.limit),
      'x-ratelimit-remaining': String(state.remaining),
      'x-ratelimit-used': String(state.used),
      'x-ratelimit-reset': String(Math.floor(state.resetAt / 1000)),
      'x-ratelimit-resource': resource,
    };
  }

  /** GitHub's answer to a REST request past the primary limit. */
  primaryRefusal(account: Account, state: PrimaryState, now: number): Refusal {
    const id = githubRequestId(now);
    return {
      limit: 'primary-rest',
      status: this.config.status,
      headers: { ...Limits.headers({ ...state, remaining: 0 }, 'core'), 'x-github-request-id': id },
      body: {
        message:
          `API rate limit exceeded for ${who(account)}. If you reach out to GitHub Support for ` +
          `help, please include the request ID ${id} and timestamp ${timestamp(now)}.`,
        documentation_url: PRIMARY_DOC_URL,
      },
    };
  }

  /** GitHub's answer to a GraphQL query once the points are spent: HTTP 200 with an error. */
  graphqlRefusal(account: Account, state: PrimaryState, now: number): Refusal {
    return {
      limit: 'primary-graphql',
      status: 200,
      headers: {
        ...Limits.headers({ ...state, remaining: 0 }, 'graphql'),
        'x-github-request-id': githubRequestId(now),
      },
      body: {
        errors: [
          {
            type: 'RATE_LIMIT',
            code: 'graphql_rate_limit',
            message: `API rate limit already exceeded for ${who(account)}.`,
          },
        ],
      },
    };
  }

  /** GitHub's answer to a secondary limit (REST: 403 or 429 as configured; GraphQL: 403). */
  secondaryRefusal(
    limit: LimitName,
    resource: 'core' | 'graphql',
    now: number,
    retryAfterSeconds = SECONDARY_RETRY_AFTER_SECONDS,
    status?: number,
  ): Refusal {
    const id = githubRequestId(now);
    return {
      limit,
      status: status ?? (resource === 'core' ? this.config.status : 403),
      headers: { 'retry-after': String(retryAfterSeconds), 'x-github-request-id': id },
      body: secondaryBody(id),
    };
  }
}

/** The body GitHub sends with a secondary rate limit (captured from GitHub in 2026). */
export function secondaryBody(requestId: string): Json {
  return {
    documentation_url: SECONDARY_DOC_URL,
    message:
      'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
      'For more on scraping GitHub and how it may affect your rights, please review our Terms of ' +
      'Service (https://docs.github.com/en/site-policy/github-terms/github-terms-of-service) ' +
      `If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
  };
}
