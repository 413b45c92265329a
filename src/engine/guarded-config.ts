/**
 * The one way epicflow runs code it does not trust in a tree (an agent's turn, setup,
 * gates, a planner, a merge's gates): git's own configuration of the tree is snapshot
 * before, and whatever the code changed there (a filter, a merge driver, a proxy, the
 * `.git` file) is put back byte for byte before epicflow runs git again. The caller
 * is told the note to keep (its record, its notes, its events).
 */
import { describeGitConfigRestore } from '../core/perimeter/index.js';
import type { GitConfigSnapshot } from './ports.js';

/** What the guard needs of a tree. */
interface GuardedTree {
  snapshotGitConfig(): Promise<GitConfigSnapshot>;
  restoreGitConfig(snapshot: GitConfigSnapshot): Promise<string[]>;
}

/**
 * Runs `work` with the tree's git configuration guarded; `restored` gets the note and
 * the files put back, only when any was.
 */
export async function withGitConfigGuarded<T>(
  tree: GuardedTree,
  during: string,
  work: () => Promise<T>,
  restored: (note: string, files: readonly string[]) => void | Promise<void>,
): Promise<T> {
  const snapshot = await tree.snapshotGitConfig();
  try {
    return await work();
  } finally {
    const files = await tree.restoreGitConfig(snapshot);
    if (files.length > 0) await restored(describeGitConfigRestore(files, during), files);
  }
}
