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

export interface CreateOctokitOptions {
  /** An installation token, a PAT or `GITHUB_TOKEN`. */
  readonly token?: string;
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
    throttle: {
      onRateLimit: onLimit('primary'),
      onSecondaryRateLimit: onLimit('secondary'),
    },
  }) as unknown as Octokit;
}
