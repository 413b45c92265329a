/** Fault injection, GitHub's rate-limit headers and per-operation counters. */

export interface FaultSpec {
  /** `METHOD /openapi/template`, an operationId (`issues/create`), or `graphql:<operationName>`. */
  readonly route: string;
  /** Answer with this status (502, 403, 429, …). */
  readonly status?: number;
  /** 403/429 as GitHub's secondary rate limit, with `retry-after`. */
  readonly kind?: 'secondary-rate-limit' | 'primary-rate-limit';
  readonly retryAfterSeconds?: number;
  /** How many matching requests to affect; default 1. */
  readonly times?: number;
  /** Delay before answering (or before the fault). */
  readonly latencyMs?: number;
  /** Close the connection without an answer. */
  readonly drop?: boolean;
  readonly message?: string;
}

interface ActiveFault {
  readonly spec: FaultSpec;
  remaining: number;
}

export class Faults {
  private readonly active: ActiveFault[] = [];

  add(spec: FaultSpec): void {
    this.active.push({ spec, remaining: spec.times ?? 1 });
  }

  clear(): void {
    this.active.length = 0;
  }

  /** The fault to apply to a request known by these names, consuming one use. */
  take(names: readonly string[]): FaultSpec | undefined {
    const f = this.active.find((a) => a.remaining > 0 && names.includes(a.spec.route));
    if (!f) return undefined;
    f.remaining -= 1;
    return f.spec;
  }
}

export interface Stats {
  requests: number;
  /** REST calls by operationId. */
  readonly rest: Record<string, number>;
  /** GraphQL documents by operation name (`anonymous` when unnamed). */
  readonly graphql: Record<string, number>;
  /** Content-creating writes (issues, comments, pull requests, sub-issue links, board items). */
  contentCreating: number;
  gitRequests: number;
  webhookDeliveries: number;
}

export function newStats(): Stats {
  return {
    requests: 0,
    rest: {},
    graphql: {},
    contentCreating: 0,
    gitRequests: 0,
    webhookDeliveries: 0,
  };
}

/** Operations GitHub counts against the content-creation secondary limit. */
export const CONTENT_CREATING = new Set([
  'issues/create',
  'issues/create-comment',
  'issues/add-sub-issue',
  'issues/add-blocked-by-dependency',
  'pulls/create',
  'graphql:addProjectV2ItemById',
  'graphql:createProjectV2Field',
  'graphql:addSubIssue',
]);

/** Primary rate-limit accounting per token, as `x-ratelimit-*` headers report it. */
export class RateLimits {
  private readonly used = new Map<string, number>();
  private readonly resetAt = Math.floor(Date.now() / 1000) + 3600;
  private readonly creations: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly contentPerMinute: number | undefined,
  ) {}

  headers(key: string, resource: 'core' | 'graphql'): Record<string, string> {
    const id = `${resource}:${key}`;
    const used = (this.used.get(id) ?? 0) + 1;
    this.used.set(id, used);
    return {
      'x-ratelimit-limit': String(this.limit),
      'x-ratelimit-remaining': String(Math.max(0, this.limit - used)),
      'x-ratelimit-used': String(used),
      'x-ratelimit-reset': String(this.resetAt),
      'x-ratelimit-resource': resource,
    };
  }

  /** Record a content-creating write; false when the per-minute cap is exceeded. */
  allowCreation(nowMs: number): boolean {
    if (this.contentPerMinute === undefined) return true;
    while (this.creations.length > 0 && (this.creations[0] ?? 0) <= nowMs - 60_000) {
      this.creations.shift();
    }
    if (this.creations.length >= this.contentPerMinute) return false;
    this.creations.push(nowMs);
    return true;
  }
}

export const SECONDARY_RATE_LIMIT_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
