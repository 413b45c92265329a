/**
 * When GitHub said "not now" because of a rate limit, and until when. A primary limit
 * names its reset (`x-ratelimit-reset`, epoch seconds; GraphQL answers HTTP 200 with a
 * `RATE_LIMIT` error and the same headers), a secondary limit says how long to wait
 * (`retry-after`, seconds) or, without it, at least a minute (GitHub's documented rule).
 * The App waits until then and decides again by itself, rather than leaving the epic for
 * someone's `/resume`.
 */
import { EpicflowError } from '../../core/errors.js';
import { graphqlErrorTypes, statusOf } from './errors.js';

/** GitHub's advice without `retry-after`: wait at least a minute. */
const SECONDARY_DEFAULT_MS = 60_000;

type Headers = Record<string, string | number | undefined>;

function headersOf(e: unknown): Headers | undefined {
  const err = e as { response?: { headers?: Headers }; headers?: Headers } | null;
  return err?.response?.headers ?? err?.headers ?? undefined;
}

function messageOf(e: unknown): string {
  const err = e as { response?: { data?: { message?: unknown } }; message?: unknown } | null;
  const m = err?.response?.data?.message ?? err?.message;
  return typeof m === 'string' ? m : '';
}

/** The GitHub failure under epicflow's wrapping (`GitHubCallError` keeps it as its cause). */
function rootOf(e: unknown): unknown {
  let at: unknown = e;
  for (
    let depth = 0;
    at instanceof EpicflowError && at.cause !== undefined && depth < 10;
    depth++
  ) {
    at = at.cause;
  }
  return at;
}

/**
 * The time (epoch ms, on `now`'s clock) after which a request refused for a rate limit may
 * be made again; undefined when `e` is no rate limit. Never before `now`.
 */
export function rateLimitedUntil(e: unknown, now: number): number | undefined {
  const root = rootOf(e);
  const status = statusOf(root);
  const types = graphqlErrorTypes(root);
  const graphqlLimit = types.some((t) => t === 'RATE_LIMIT' || t === 'RATE_LIMITED');
  const restLimit = status === 429 || (status === 403 && /rate limit/i.test(messageOf(root)));
  if (!graphqlLimit && !restLimit) return undefined;
  const headers = headersOf(root) ?? {};
  const after = Number(headers['retry-after']);
  if (headers['retry-after'] !== undefined && Number.isFinite(after)) {
    return now + Math.max(0, after) * 1000;
  }
  const reset = Number(headers['x-ratelimit-reset']);
  if (String(headers['x-ratelimit-remaining']) === '0' && Number.isFinite(reset)) {
    return Math.max(now, reset * 1000);
  }
  return now + SECONDARY_DEFAULT_MS;
}
