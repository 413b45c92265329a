/**
 * The engine's git ports (`GitPort`, `LandGitPort`, engine/ports.ts) over the git
 * adapter: the repository's refs, branches and worktrees.
 */
import type { GitPort, LandGitPort, LandTreePort, WorktreePort } from '../../engine/ports.js';
import type { Git } from './git.js';
import type { TreeWriter } from './tree-writer.js';
import { readMergedStories } from './merged-stories.js';

/**
 * The git port over the git adapter; with a `writer`, the trees it makes for steps are
 * written as that user (see `TreeWriter`).
 */
export function gitPort(repo: Git, writer?: TreeWriter): GitPort {
  return {
    root: repo.root,
    gitDir: repo.gitDir,
    revParse: (ref) => repo.revParse(ref),
    defaultBase: () => repo.defaultBase(),
    createBranch: (name, sha) => repo.createBranch(name, sha),
    deleteBranch: (name) => repo.deleteBranch(name),
    updateRef: (ref, next, expected) => repo.updateRef(ref, next, expected),
    addWorktree: async (path, branch) => {
      await repo.addWorktree(path, branch, writer);
      return repo.worktree(path) as WorktreePort;
    },
    // Never reused as found: `addWorktree` checks the commit out anew.
    detachedWorktree: async (path, sha) => {
      await repo.addWorktree(path, sha, writer);
      return repo.worktree(path) as WorktreePort;
    },
    removeWorktree: (path) => repo.removeWorktree(path),
    diff: (base, head) => repo.diff(base, head),
    sameTree: (a, b) => repo.sameTree(a, b),
    treeFiles: (commit) => repo.treeFiles(commit),
    readBlobs: (objects) => repo.readBlobs(objects),
    mergedStories: (branch) => readMergedStories(repo, branch),
  };
}

/** The land port over the git adapter (`writer`: as `gitPort`'s). */
export function landGitPort(repo: Git, writer?: TreeWriter): LandGitPort {
  return {
    ...gitPort(repo, writer),
    isAncestor: (a, d) => repo.isAncestor(a, d),
    commitTree: (of, parents, message) => repo.commitTree(of, parents, message),
    readBlob: (commit, path) => repo.readBlob(commit, path),
    listFiles: (commit) => repo.listFiles(commit),
    // Never reused as found: `addWorktree` checks the commit out anew.
    landTree: async (path, sha) => {
      await repo.addWorktree(path, sha, writer);
      return repo.worktree(path) as LandTreePort;
    },
  };
}
