/**
 * Environment pieces every CLI harness shares: the isolated home, a fixed
 * time zone (so clock times in limit messages are read without guessing), and
 * the executor's own env minus anything that carries a GitHub credential.
 */
import { join } from 'node:path/posix';
import type { TurnRequest } from '../executor.js';
import { withoutGithubTokens } from './signals.js';

/** HOME and the XDG folders inside the executor's isolated home. */
function isolatedHome(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
}

/**
 * The env a CLI gets from its harness: harness defaults, then the executor's
 * configured env (it may override defaults such as a base URL), then the
 * isolation variables, which nothing overrides. GitHub tokens never pass.
 */
export function harnessEnv(
  request: TurnRequest,
  defaults: Record<string, string>,
  isolation: Record<string, string>,
  drop: readonly string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {
    ...defaults,
    ...request.env,
    ...isolatedHome(request.home),
    // Clock times in limit messages ("try again at 9:46 AM") are then in UTC.
    TZ: 'UTC',
    ...isolation,
  };
  for (const name of drop) delete env[name];
  return withoutGithubTokens(env);
}

/** A file name safe in any file system, for per-turn files in a shared home. */
export function turnFileName(request: TurnRequest, suffix: string): string {
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '_');
  return `${safe(request.epic)}-${safe(request.story)}-${request.role}-${request.round}${suffix}`;
}
