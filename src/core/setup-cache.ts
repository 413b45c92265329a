/**
 * The setup cache's key: what setup makes on a fresh checkout (installed dependencies)
 * depends on the setup commands and the lockfiles, so a checkout of another commit with
 * the same of both gets the same files — and, for Python, at the same path. Pure: the
 * lockfiles' bytes come from git's objects of the commit, read by the caller.
 */
import { createHash } from 'node:crypto';
import { MANAGER_LOCKFILES } from './init/detect.js';
import { REQUIREMENTS } from './init/ecosystems.js';
import type { ScopedCommand } from './packages.js';

/** Python's lockfiles. */
const PYTHON_LOCKFILES = ['uv.lock', 'poetry.lock', 'pdm.lock'];

/** Lockfiles of the ecosystems init knows besides Node's. */
const OTHER_LOCKFILES = [...PYTHON_LOCKFILES, 'go.sum', 'Cargo.lock'];

const LOCKFILES: ReadonlySet<string> = new Set([
  ...Object.values(MANAGER_LOCKFILES).flat(),
  ...OTHER_LOCKFILES,
]);

/**
 * The files of a Python project (its lockfiles and its own metadata). What setup installs
 * for one is bound to the folder it ran in: a virtual environment's scripts name it in
 * their first line (`.venv/bin/pytest`), its `activate` sets it, an editable install
 * (`-e .`) records it. Put back in a checkout at another path, those would run nothing or
 * import another tree's code.
 */
const PYTHON_FILES: ReadonlySet<string> = new Set([
  ...PYTHON_LOCKFILES,
  'pyproject.toml',
  'setup.py',
]);

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Whether a repository path (in any folder) is a lockfile that pins what setup installs. */
export function isLockfile(path: string): boolean {
  const name = nameOf(path);
  return LOCKFILES.has(name) || REQUIREMENTS.test(name);
}

/**
 * Whether what setup makes for a commit with these paths is bound to its checkout's path:
 * it holds a Python project, in any folder.
 */
export function boundToPlace(paths: Iterable<string>): boolean {
  for (const p of paths)
    if (PYTHON_FILES.has(nameOf(p)) || REQUIREMENTS.test(nameOf(p))) return true;
  return false;
}

/**
 * What an install resolves from when nothing pins it: the projects' own manifests, in any
 * folder.
 */
const MANIFESTS: ReadonlySet<string> = new Set([
  'package.json',
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'go.mod',
  'Cargo.toml',
]);

/**
 * The files of a commit whose bytes the key holds: its lockfiles; without any, its
 * manifests (then the key holds the epic too, see `setupCacheKey`).
 */
export function keyFiles(paths: readonly string[]): string[] {
  const locks = paths.filter(isLockfile);
  return locks.length > 0 ? locks : paths.filter((p) => MANIFESTS.has(nameOf(p)));
}

/** A key, and what two checkouts with it have in common (for the line that says it was used). */
export interface SetupCacheKey {
  readonly key: string;
  readonly same: string;
}

/**
 * The key of what `setup` makes, given the bytes of the commit's `keyFiles` (path and
 * content) and, when it is bound to it (`boundToPlace`), the checkout's path: only a
 * checkout at that path (the same story's next check) gets what setup made there. With
 * lockfiles, two commits with the same of them install the same. Without, an install
 * resolves the manifests' ranges afresh each time: the key holds the epic, so that its
 * baseline, its stories' checks and its merged tree install once and check against the
 * same versions, and the next epic resolves again. Null when there is no setup, no such
 * file, or none pins and no epic is given.
 */
export function setupCacheKey(
  setup: readonly ScopedCommand[],
  files: readonly { readonly path: string; readonly content: Uint8Array }[],
  where: { readonly place?: string; readonly epic?: string } = {},
): SetupCacheKey | null {
  if (setup.length === 0 || files.length === 0) return null;
  const pinned = files.some((f) => isLockfile(f.path));
  if (!pinned && where.epic === undefined) return null;
  const hash = createHash('sha256');
  hash.update(JSON.stringify(setup.map((s) => [s.dir, s.command])));
  if (where.place !== undefined) hash.update(`\nat ${JSON.stringify(where.place)}`);
  if (!pinned) hash.update(`\nin the epic ${JSON.stringify(where.epic)}`);
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const content = createHash('sha256').update(file.content).digest('hex');
    hash.update(`\n${JSON.stringify(file.path)} ${content}`);
  }
  return {
    key: hash.digest('hex'),
    same: pinned
      ? 'same setup and lockfiles'
      : 'same setup and manifests in this epic: no lockfile pins them',
  };
}
