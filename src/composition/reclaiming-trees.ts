/**
 * A tree untrusted code was given is removed with root's rights before git removes it or
 * checks it out anew: it holds files of the untrusted user (a killed run or job, a crash, or
 * a tree taken back by its top alone, see hand-over.ts), which epicflow, when it is not
 * root, could not delete. Nothing in it is taken back first: it is gone either way.
 */
import { resolve } from 'node:path';
import type { Untrusted } from '../adapters/process/untrusted.js';
import type { GitPort, LandGitPort } from '../engine/ports.js';

/**
 * Removes a tree untrusted code was given; never the repository's own tree (git refuses to
 * remove it, and nothing may remove it first).
 */
async function discardTree(untrusted: Untrusted, git: GitPort, path: string): Promise<void> {
  if (resolve(path) !== resolve(git.root)) await untrusted.discard([path]);
}

export function reclaimingTrees(git: GitPort, untrusted: Untrusted | undefined): GitPort {
  if (untrusted === undefined || !untrusted.isolated) return git;
  const discard = (path: string): Promise<void> => discardTree(untrusted, git, path);
  return {
    ...git,
    addWorktree: async (path, branch) => {
      await discard(path);
      return git.addWorktree(path, branch);
    },
    detachedWorktree: async (path, sha) => {
      await discard(path);
      return git.detachedWorktree(path, sha);
    },
    removeWorktree: async (path) => {
      await discard(path);
      return git.removeWorktree(path);
    },
  };
}

/** The same for landing's port, whose land tree is one more such tree. */
export function reclaimingLandTrees(
  git: LandGitPort,
  untrusted: Untrusted | undefined,
): LandGitPort {
  if (untrusted === undefined || !untrusted.isolated) return git;
  return {
    ...git,
    ...reclaimingTrees(git, untrusted),
    landTree: async (path, sha) => {
      await discardTree(untrusted, git, path);
      return git.landTree(path, sha);
    },
  };
}
