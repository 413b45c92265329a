/**
 * The setup cache's key: what setup makes on a fresh checkout (installed dependencies)
 * depends on the setup commands and the lockfiles, so a checkout of another commit with
 * the same of both gets the same files. Pure: the lockfiles' bytes come from git's
 * objects of the commit, read by the caller.
 */
import { createHash } from 'node:crypto';
import { MANAGER_LOCKFILES } from './init/detect.js';
import { REQUIREMENTS } from './init/ecosystems.js';
import type { ScopedCommand } from './packages.js';

/** Lockfiles of the ecosystems init knows besides Node's. */
const OTHER_LOCKFILES = ['uv.lock', 'poetry.lock', 'pdm.lock', 'go.sum', 'Cargo.lock'];

const LOCKFILES: ReadonlySet<string> = new Set([
  ...Object.values(MANAGER_LOCKFILES).flat(),
  ...OTHER_LOCKFILES,
]);

/** Whether a repository path (in any folder) is a lockfile that pins what setup installs. */
export function isLockfile(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return LOCKFILES.has(name) || REQUIREMENTS.test(name);
}

/**
 * The key of what `setup` makes, given the commit's lockfiles (path and bytes); null
 * when there is no setup or no lockfile: nothing says two commits install the same.
 */
export function setupCacheKey(
  setup: readonly ScopedCommand[],
  lockfiles: readonly { readonly path: string; readonly content: Uint8Array }[],
): string | null {
  if (setup.length === 0 || lockfiles.length === 0) return null;
  const hash = createHash('sha256');
  hash.update(JSON.stringify(setup.map((s) => [s.dir, s.command])));
  for (const file of [...lockfiles].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const content = createHash('sha256').update(file.content).digest('hex');
    hash.update(`\n${JSON.stringify(file.path)} ${content}`);
  }
  return hash.digest('hex');
}
