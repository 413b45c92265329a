/**
 * The engine's git port (`GitPort`, engine/ports.ts) over the git adapter: the
 * repository's refs, branches and worktrees.
 */
import type { GitPort, WorktreePort } from '../../engine/ports.js';
import type { Git } from './git.js';
import { readMergedStories } from './merged-stories.js';

/** The git port over the git adapter. */
export function gitPort(repo: Git): GitPort {
  return {
    root: repo.root,
    gitDir: repo.gitDir,
    revParse: (ref) => repo.revParse(ref),
    defaultBase: () => repo.defaultBase(),
    createBranch: (name, sha) => repo.createBranch(name, sha),
    deleteBranch: (name) => repo.deleteBranch(name),
    updateRef: (ref, next, expected) => repo.updateRef(ref, next, expected),
    addWorktree: async (path, branch) => {
      await repo.addWorktree(path, branch);
      return repo.worktree(path) as WorktreePort;
    },
    // Never reused as found: `addWorktree` checks the commit out anew.
    detachedWorktree: async (path, sha) => {
      await repo.addWorktree(path, sha);
      return repo.worktree(path) as WorktreePort;
    },
    removeWorktree: (path) => repo.removeWorktree(path),
    diff: (base, head) => repo.diff(base, head),
    mergedStories: (branch) => readMergedStories(repo, branch),
  };
}
