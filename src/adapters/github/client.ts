/**
 * The one place Octokit is built. In production the throttling plugin keeps us
 * under GitHub's primary and secondary limits (writes spaced, `retry-after`
 * honoured) and the retry plugin retries 5xx answers; tests switch both off so
 * writes are not spaced seconds apart.
 */
import { createRequire } from 'node:module';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';

/** How often a rate-limited request is retried before the error surfaces. */
const RATE_LIMIT_RETRIES = 3;

export interface OctokitLog {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

interface CreateOctokitOptions {
  /** An installation token, a PAT or `GITHUB_TOKEN`. */
  readonly token?: string;
  /**
   * Asked for the token on every request instead: installation tokens that are
   * minted again before they expire (see `appTokens`).
   */
  readonly tokenSource?: () => Promise<string>;
  /** Another auth strategy (e.g. `createAppAuth` of @octokit/auth-app) with its options. */
  readonly authStrategy?: unknown;
  readonly auth?: unknown;
  /** `https://api.github.com`, a GHES `https://<host>/api/v3`, or a test double. */
  readonly baseUrl?: string;
  /** Throttling and retries on; off in tests unless a test opts in. */
  readonly production: boolean;
  readonly log?: OctokitLog;
}

const silent: OctokitLog = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  const pkg = require('../../../package.json') as { version: string };
  return pkg.version;
}

export const USER_AGENT = `epicflow/${packageVersion()}`;

interface HookRequest {
  (options: unknown): Promise<unknown>;
  endpoint: { merge(route: unknown, parameters?: unknown): { headers: Record<string, unknown> } };
}

/** Waits before asking again after a 401 (GitHub may not know a token minted a moment ago). */
const NEW_TOKEN_RETRY_MS = [1000, 2000];

/**
 * An Octokit auth strategy that sets the token the source gives at the time of
 * each request (as `@octokit/auth-token` does with a fixed one), so a client
 * that lives longer than one token keeps working. A 401 is retried a little
 * later with the token asked again, as @octokit/auth-app does for new tokens.
 */
function tokenSourceStrategy(source: () => Promise<string>) {
  return () => {
    const auth = async () => ({
      type: 'token',
      tokenType: 'installation',
      token: await source(),
    });
    const hook = async (request: HookRequest, route: unknown, parameters?: unknown) => {
      const endpoint = request.endpoint.merge(route, parameters);
      for (let retry = 0; ; retry++) {
        endpoint.headers['authorization'] = `token ${await source()}`;
        try {
          return await request(endpoint);
        } catch (e) {
          const wait = NEW_TOKEN_RETRY_MS[retry];
          if ((e as { status?: unknown }).status !== 401 || wait === undefined) throw e;
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }
    };
    return Object.assign(auth, { hook });
  };
}

const ProductionOctokit = Octokit.plugin(throttling, retry);

export function createOctokit(options: CreateOctokitOptions): Octokit {
  const log = options.log ?? silent;
  const common: Record<string, unknown> = {
    userAgent: USER_AGENT,
    log,
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl.replace(/\/+$/, '') }),
  };
  if (options.token !== undefined) common['auth'] = options.token;
  else if (options.auth !== undefined) common['auth'] = options.auth;
  if (options.authStrategy !== undefined) common['authStrategy'] = options.authStrategy;
  else if (options.tokenSource !== undefined)
    common['authStrategy'] = tokenSourceStrategy(options.tokenSource);

  if (!options.production) return new Octokit(common);

  const onLimit =
    (kind: string) =>
    (retryAfter: number, request: { method: string; url: string }, _o: unknown, count: number) => {
      log.warn(
        `GitHub ${kind} rate limit on ${request.method} ${request.url}; ` +
          `retry ${count + 1} of ${RATE_LIMIT_RETRIES} after ${retryAfter}s`,
      );
      return count < RATE_LIMIT_RETRIES;
    };
  return new ProductionOctokit({
    ...common,
    // The plugin's list, and 409: a lost compare-and-swap is decided again on fresh state.
    retry: { doNotRetry: [400, 401, 403, 404, 409, 410, 422, 451] },
    throttle: {
      onRateLimit: onLimit('primary'),
      onSecondaryRateLimit: onLimit('secondary'),
    },
  }) as unknown as Octokit;
}
