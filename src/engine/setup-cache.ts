/**
 * Setup on a fresh checkout of a commit, cached by the lockfiles' hash: what setup made
 * there (installed dependencies) comes from setup run on a checkout epicflow made of a
 * commit — this one, or an earlier one with the same setup commands and lockfiles —
 * never from a tree an agent worked in. The key is read from git's objects of the
 * commit; a commit without a lockfile gets no cache; a failed setup is never kept.
 */
import { describeError } from '../core/errors.js';
import { boundToPlace, isLockfile, setupCacheKey } from '../core/setup-cache.js';
import type { CheckScope } from '../core/packages.js';
import type { FailedSetup } from '../core/story/index.js';
import type { GitPort, SetupCachePort } from './ports.js';

/** A failing setup command (with its package's folder) and its output. */
type SetupFailure = FailedSetup & { readonly command: string };

interface FreshSetup<F extends SetupFailure> {
  /** The checkout epicflow made of `sha`, where no agent worked. */
  readonly tree: string;
  readonly sha: string;
  readonly scope: CheckScope;
  /** The story's (or the epic's) log and notes: a line that says the cache was used. */
  readonly say: (line: string) => void;
  /** Setup itself, run in the checkout: the failing command, or null when it passed. */
  readonly run: () => Promise<F | null>;
}

/**
 * The key of setup on `sha` in the checkout `tree` (its commands, its lockfiles' bytes from
 * git's objects, and the tree's path where what setup makes is bound to it; null: no
 * lockfile), and the commit's paths.
 */
async function keyOf(
  git: GitPort,
  sha: string,
  scope: CheckScope,
  tree: string,
): Promise<{ key: string | null; tracked: ReadonlySet<string> }> {
  const files = await git.treeFiles(sha);
  const tracked = new Set(files.map((f) => f.path));
  const locks = files.filter(
    (f) => isLockfile(f.path) && (f.mode === '100644' || f.mode === '100755'),
  );
  if (locks.length === 0) return { key: null, tracked };
  const blobs = await git.readBlobs(locks.map((f) => f.object));
  const lockfiles = locks.flatMap((f) => {
    const content = blobs.get(f.object);
    return content === undefined ? [] : [{ path: f.path, content }];
  });
  return {
    key: setupCacheKey(scope.setup, lockfiles, boundToPlace(tracked) ? tree : undefined),
    tracked,
  };
}

/**
 * Setup on a fresh checkout: the cached files of its key when kept (setup does not run),
 * else setup, whose files are kept when it passed.
 */
export async function setupFromCache<F extends SetupFailure>(
  ports: { readonly git: GitPort; readonly setupCache?: SetupCachePort | undefined },
  enabled: boolean,
  input: FreshSetup<F>,
): Promise<F | null> {
  const cache = enabled && input.scope.setup.length > 0 ? ports.setupCache : undefined;
  if (cache === undefined) return input.run();
  const { key, tracked } = await keyOf(ports.git, input.sha, input.scope, input.tree);
  if (key === null) return input.run();
  const short = key.slice(0, 12);
  if (await cache.restore(key, input.tree)) {
    input.say(`setup came from the cache of key ${short} (same setup and lockfiles)`);
    return null;
  }
  const failed = await input.run();
  if (failed !== null) return failed;
  try {
    await cache.store(key, input.tree, tracked);
  } catch (e) {
    // Setup passed: the check goes on, the next one runs setup again.
    input.say(`setup's files could not be cached: ${describeError(e)}`);
  }
  return null;
}
