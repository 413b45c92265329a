/**
 * Setup on a fresh checkout of a commit, cached by the lockfiles' hash: what setup made
 * there (installed dependencies) comes from setup run on a checkout epicflow made of a
 * commit — this one, or an earlier one with the same setup commands and lockfiles —
 * never from a tree an agent worked in. The key is read from git's objects of the
 * commit (its lockfiles, else its manifests within one epic); a failed setup is never kept.
 */
import { describeError } from '../core/errors.js';
import { boundToPlace, keyFiles, setupCacheKey, type SetupCacheKey } from '../core/setup-cache.js';
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
  /** The epic the check is of: an install no lockfile pins is reused within it alone. */
  readonly epic: string;
  /** The story's (or the epic's) log and notes: a line that says the cache was used. */
  readonly say: (line: string) => void;
  /** Setup itself, run in the checkout: the failing command, or null when it passed. */
  readonly run: () => Promise<F | null>;
}

/**
 * The key of setup on `sha` in the checkout `tree` (its commands, the bytes of its
 * lockfiles — else of its manifests, within `epic` — from git's objects, and the tree's
 * path where what setup makes is bound to it; null: none of those files), and the commit's
 * paths.
 */
async function keyOf(
  git: GitPort,
  sha: string,
  where: { readonly scope: CheckScope; readonly tree: string; readonly epic: string },
): Promise<{ key: SetupCacheKey | null; tracked: ReadonlySet<string> }> {
  const files = await git.treeFiles(sha);
  // Every path the commit holds (links and gitlinks too): setup's files are the others.
  const tracked = new Set(files.map((f) => f.path));
  // Keyed on files' bytes alone: a link's target is no content of the commit's.
  const regular = files.filter((f) => f.mode === '100644' || f.mode === '100755');
  const keyed = new Set(keyFiles(regular.map((f) => f.path)));
  const picked = regular.filter((f) => keyed.has(f.path));
  if (picked.length === 0) return { key: null, tracked };
  const blobs = await git.readBlobs(picked.map((f) => f.object));
  const contents = picked.flatMap((f) => {
    const content = blobs.get(f.object);
    return content === undefined ? [] : [{ path: f.path, content }];
  });
  return {
    key: setupCacheKey(where.scope.setup, contents, {
      ...(boundToPlace(tracked) ? { place: where.tree } : {}),
      epic: where.epic,
    }),
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
  const { key: keyed, tracked } = await keyOf(ports.git, input.sha, input);
  if (keyed === null) return input.run();
  const { key, same } = keyed;
  if (await cache.restore(key, input.tree)) {
    input.say(`setup came from the cache of key ${key.slice(0, 12)} (${same})`);
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
