/** Types shared by the double's route handlers. */
import type { Double } from './double.js';
import type { UserRec } from './state.js';

export type Json = Record<string, unknown>;

export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** A GitHub-style error answer (`{ message, documentation_url, status }`). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface RestContext {
  readonly double: Double;
  readonly operationId: string;
  readonly params: Record<string, string>;
  readonly query: URLSearchParams;
  readonly body: Json;
  /** Who the token belongs to; undefined for anonymous calls and app JWTs. */
  readonly actor: UserRec | undefined;
  readonly auth: 'anonymous' | 'token' | 'app-jwt';
  /** Whether the token is a GitHub App's (an installation token or a `GITHUB_TOKEN`). */
  readonly viaApp: boolean;
  readonly url: URL;
}

export type Handler = (ctx: RestContext) => Promise<Reply> | Reply;

/** Route table: `METHOD /openapi/path/{template}` → handler. */
export type RouteTable = Record<string, Handler>;

export function param(ctx: RestContext, name: string): string {
  const v = ctx.params[name];
  if (v === undefined) throw new HttpError(400, `missing path parameter ${name}`);
  return v;
}

export function str(body: Json, key: string): string | undefined {
  const v = body[key];
  return typeof v === 'string' ? v : undefined;
}

/**
 * GitHub's page-number pagination: `per_page` (default 30, max 100), `page`, and a `Link`
 * header with `next`/`last`/`first`/`prev` relations.
 */
export function paginate<T>(
  ctx: RestContext,
  items: readonly T[],
): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Number(ctx.query.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (p: number): string => {
    const u = new URL(ctx.url.href);
    u.searchParams.set('per_page', String(perPage));
    u.searchParams.set('page', String(p));
    return u.href;
  };
  const rels: string[] = [];
  if (page > 1) rels.push(`<${link(page - 1)}>; rel="prev"`);
  if (page < last) rels.push(`<${link(page + 1)}>; rel="next"`);
  if (page < last) rels.push(`<${link(last)}>; rel="last"`);
  if (page > 1) rels.push(`<${link(1)}>; rel="first"`);
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    headers: rels.length > 0 ? { link: rels.join(', ') } : {},
  };
}
