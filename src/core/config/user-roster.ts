/**
 * The user-level roster (docs/executors.md#your-own-roster): executors a person keeps for
 * every repository in `$XDG_CONFIG_HOME/epicflow/executors.yml` (default
 * `~/.config/epicflow/executors.yml`), added under a repository's own. Pure: the
 * environment is passed in and the file read by the caller.
 */
import { isRecord } from './cross-check.js';

/** Where the user-level roster is read from; null when neither variable gives a home. */
export function userRosterPath(env: Readonly<Record<string, string | undefined>>): string | null {
  const xdg = env['XDG_CONFIG_HOME'];
  // The XDG spec: a relative XDG_CONFIG_HOME is invalid and must be ignored.
  if (xdg !== undefined && xdg.startsWith('/'))
    return `${xdg.replace(/\/+$/, '')}/epicflow/executors.yml`;
  const home = env['HOME'];
  if (home === undefined || !home.startsWith('/')) return null;
  return `${home.replace(/\/+$/, '')}/.config/epicflow/executors.yml`;
}

/**
 * The config value with the user's executors added after its own. A repository entry
 * replaces the user's entry of the same id as a whole: the repository's file is complete on
 * its own (it is what runs on GitHub, where no user file exists), so no executor ever runs
 * with fields taken from two files.
 */
export function withUserExecutors(
  value: unknown,
  userExecutors: readonly Record<string, unknown>[],
): unknown {
  if (userExecutors.length === 0) return value;
  const config = value ?? {};
  // A file that is not a mapping, or whose executors are not a list, is reported as it is.
  if (!isRecord(config)) return value;
  const own: unknown = config.executors ?? [];
  if (!Array.isArray(own)) return value;
  const ids = new Set(own.map((e: unknown) => (isRecord(e) ? e.id : undefined)));
  return { ...config, executors: [...own, ...userExecutors.filter((e) => !ids.has(e.id))] };
}
