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
 * The key of what `setup` makes, given the commit's lockfiles (path and bytes) and, when
 * it is bound to it (`boundToPlace`), the checkout's path: only a checkout at that path
 * (the same story's next check) gets what setup made there. Null when there is no setup
 * or no lockfile: nothing says two commits install the same.
 */
export function setupCacheKey(
  setup: readonly ScopedCommand[],
  lockfiles: readonly { readonly path: string; readonly content: Uint8Array }[],
  place?: string,
): string | null {
  if (setup.length === 0 || lockfiles.length === 0) return null;
  const hash = createHash('sha256');
  hash.update(JSON.stringify(setup.map((s) => [s.dir, s.command])));
  if (place !== undefined) hash.update(`\nat ${JSON.stringify(place)}`);
  for (const file of [...lockfiles].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const content = createHash('sha256').update(file.content).digest('hex');
    hash.update(`\n${JSON.stringify(file.path)} ${content}`);
  }
  return hash.digest('hex');
}
