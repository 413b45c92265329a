/**
 * Turns Octokit failures into `EpicflowError('github', …)`: what we tried, what
 * GitHub answered, and for 403/404 on permission-gated endpoints which App
 * permission is probably missing (GitHub hides forbidden resources behind 404).
 */
import { EpicflowError } from '../../core/errors.js';

/** GitHub App permissions, named as people see them in the App settings. */
type AppPermission =
  | 'Issues: read and write'
  | 'Pull requests: read and write'
  | 'Contents: read and write'
  | 'Contents: read'
  | 'Actions: read and write'
  | 'Metadata: read'
  | 'Organization projects: read and write';

interface HttpLikeError {
  readonly status?: unknown;
  readonly message?: unknown;
  readonly response?: { readonly data?: unknown };
  readonly errors?: unknown;
}

/** The HTTP status of an Octokit error, or undefined for other failures. */
export function statusOf(e: unknown): number | undefined {
  const s = (e as HttpLikeError | null)?.status;
  return typeof s === 'number' ? s : undefined;
}

/** GitHub's own message (`{ message }` of a REST answer, or the GraphQL error messages). */
function githubMessage(e: unknown): string {
  const err = e as HttpLikeError | null;
  const data = err?.response?.data as { message?: unknown } | undefined;
  if (typeof data?.message === 'string') return data.message;
  if (Array.isArray(err?.errors)) {
    const msgs = (err.errors as { message?: unknown }[])
      .map((x) => x.message)
      .filter((m): m is string => typeof m === 'string');
    if (msgs.length > 0) return msgs.join('; ');
  }
  return e instanceof Error ? e.message : String(e);
}

/** GraphQL error types (`FORBIDDEN`, `NOT_FOUND`, `INSUFFICIENT_SCOPES`…). */
export function graphqlErrorTypes(e: unknown): string[] {
  const errors = (e as HttpLikeError | null)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.flatMap((x: { type?: unknown }) => (typeof x.type === 'string' ? [x.type] : []));
}

function looksForbidden(e: unknown): boolean {
  const status = statusOf(e);
  if (status === 403 || status === 404) return true;
  const types = graphqlErrorTypes(e);
  return types.some((t) => t === 'FORBIDDEN' || t === 'NOT_FOUND' || t === 'INSUFFICIENT_SCOPES');
}

/** A GitHub call that failed, with the App permission it probably lacked (when forbidden). */
class GitHubCallError extends EpicflowError {
  readonly permission: AppPermission | undefined;

  constructor(
    message: string,
    options: { details: readonly string[]; cause: unknown; permission?: AppPermission },
  ) {
    super('github', message, { details: options.details, cause: options.cause });
    this.permission = options.permission;
  }
}

/**
 * Wraps any failure of a GitHub call. `action` completes "cannot …", e.g.
 * "create the status comment on acme/shop#12".
 */
export function githubError(action: string, e: unknown, permission?: AppPermission): EpicflowError {
  if (e instanceof EpicflowError) return e;
  const status = statusOf(e);
  const answer = status === undefined ? githubMessage(e) : `HTTP ${status}: ${githubMessage(e)}`;
  const details: string[] = [];
  const lacking = permission !== undefined && looksForbidden(e) && !isTransient(e);
  if (lacking) {
    details.push(
      `the token probably lacks the GitHub App permission "${permission}" ` +
        '(or the App is not installed for this repository or organization)',
    );
  }
  // A 404 may be a hidden resource or a missing one: only a refusal names the permission.
  return new GitHubCallError(`GitHub: cannot ${action} (${answer})`, {
    details,
    cause: e,
    ...(lacking && looksRefused(e) ? { permission } : {}),
  });
}

/** GitHub said no (403, FORBIDDEN), rather than "no such thing" (404, NOT_FOUND). */
function looksRefused(e: unknown): boolean {
  if (statusOf(e) === 403) return true;
  return graphqlErrorTypes(e).some((t) => t === 'FORBIDDEN' || t === 'INSUFFICIENT_SCOPES');
}

/** The App permission a failed call lacked, when GitHub refused it as forbidden. */
export function lackingPermission(e: unknown): AppPermission | undefined {
  if (e instanceof GitHubCallError) return e.permission;
  return e instanceof EpicflowError ? lackingPermission(e.cause) : undefined;
}

/**
 * Whether the same request may well succeed later without anyone doing anything:
 * GitHub's 5xx, rate limits, a dropped connection, a GraphQL error of no known
 * kind. A failure epicflow itself found in an answer (a missing project, a
 * corrupt record) and a refusal (403, 404, 422) are not: someone has to act.
 */
export function isTransient(e: unknown): boolean {
  if (e instanceof EpicflowError) return e.cause === undefined ? false : isTransient(e.cause);
  const status = statusOf(e);
  if (status !== undefined) {
    if (status >= 500 || status === 429) return true;
    return status === 403 && /rate limit/i.test(githubMessage(e));
  }
  const types = graphqlErrorTypes(e);
  if (types.some((t) => t === 'RATE_LIMITED' || t === 'RATE_LIMIT')) return true;
  return !types.some((t) => REFUSALS.has(t));
}

const REFUSALS: ReadonlySet<string> = new Set([
  'FORBIDDEN',
  'NOT_FOUND',
  'INSUFFICIENT_SCOPES',
  'UNPROCESSABLE',
]);

/** Runs one GitHub call, wrapping its failure. */
export async function attempt<T>(
  action: string,
  permission: AppPermission | undefined,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw githubError(action, e, permission);
  }
}
