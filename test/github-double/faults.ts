/** Fault injection and the double's counters. */
import type { LimitName } from './limits.js';

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

/** One token's traffic (`gh.stats.byToken[token]`). */
export interface TokenStats {
  /** Who the token acts as. */
  readonly login: string;
  /** The account its requests count against (`user:<id>`, `installation:<id>`, `actions:<repo>`). */
  readonly account: string;
  rest: number;
  graphql: number;
  /** GraphQL points by GitHub's cost formula (primary limit). */
  graphqlPoints: number;
  /** Requests to content-creating operations (each REST call or GraphQL document once). */
  contentCreating: number;
  /** Git over smart HTTP (clone, fetch, push: each HTTP request). */
  git: number;
  /** Requests a rate limit refused. */
  limitHits: number;
  /** Requests by REST operationId and `graphql <operation>`. */
  readonly operations: Record<string, number>;
}

/** A request a rate limit refused, on the double's clock. */
export interface LimitHit {
  readonly limit: LimitName;
  /** Milliseconds since the epoch, on `gh.clock`. */
  readonly at: number;
  readonly account: string;
  readonly token: string;
  /** `METHOD /template` or `graphql <operation>`. */
  readonly route: string;
  /** The refusal's `x-github-request-id` (GitHub's messages name it too). */
  readonly requestId: string;
}

/** Moments the goals are measured from, on the double's clock. */
export type TimelineEvent =
  | {
      readonly kind: 'labeled';
      readonly at: number;
      readonly repo: string;
      readonly issue: number;
      readonly label: string;
    }
  | {
      readonly kind: 'dispatch';
      readonly at: number;
      readonly repo: string;
      readonly workflow: string;
      readonly inputs: Readonly<Record<string, unknown>>;
      readonly runId: number;
    };

export interface Stats {
  requests: number;
  /** REST calls by operationId. */
  readonly rest: Record<string, number>;
  /** GraphQL documents by operation name (`anonymous` when unnamed). */
  readonly graphql: Record<string, number>;
  /**
   * Content created: each REST call to a content-creating operation, and each
   * content-creating field of a GraphQL mutation (an aliased batch counts each item).
   */
  contentCreating: number;
  /** Requests to content-creating operations (what GitHub's 80/minute and 500/hour count). */
  contentCreatingRequests: number;
  /** GraphQL points by GitHub's cost formula, all tokens. */
  graphqlPoints: number;
  gitRequests: number;
  webhookDeliveries: number;
  /** REST and GraphQL answers by HTTP status. */
  readonly statuses: Record<number, number>;
  /** Per token (`anonymous`, `app-jwt` and `invalid` for requests without one). */
  readonly byToken: Record<string, TokenStats>;
  /** Every request a rate limit refused, oldest first. */
  readonly limitHits: LimitHit[];
  /** Labels added and workflows dispatched, oldest first. */
  readonly timeline: TimelineEvent[];
}

export function newStats(): Stats {
  return {
    requests: 0,
    rest: {},
    graphql: {},
    contentCreating: 0,
    contentCreatingRequests: 0,
    graphqlPoints: 0,
    gitRequests: 0,
    webhookDeliveries: 0,
    statuses: {},
    byToken: {},
    limitHits: [],
    timeline: [],
  };
}

/**
 * Operations GitHub counts against the content-creation secondary limit: issues, comments,
 * pull requests and reviews, discussions, sub-issue and dependency links, board items,
 * fields and projects — by REST operationId or GraphQL mutation field.
 */
export const CONTENT_CREATING = new Set([
  'issues/create',
  'issues/create-comment',
  'issues/add-sub-issue',
  'issues/add-blocked-by-dependency',
  'pulls/create',
  'pulls/create-review',
  'pulls/create-review-comment',
  'graphql:createIssue',
  'graphql:addComment',
  'graphql:addSubIssue',
  'graphql:createPullRequest',
  'graphql:addPullRequestReview',
  'graphql:addPullRequestReviewComment',
  'graphql:addPullRequestReviewThread',
  'graphql:createDiscussion',
  'graphql:addDiscussionComment',
  'graphql:createProjectV2',
  'graphql:addProjectV2ItemById',
  'graphql:addProjectV2DraftIssue',
  'graphql:createProjectV2Field',
]);
