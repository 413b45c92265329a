/**
 * A tree is epicflow's again before it is removed or checked out anew: one a killed
 * run or job (or a crash) left with the untrusted user holds files only that user may
 * delete, which epicflow, when it is not root, could not.
 */
import type { Untrusted } from '../adapters/process/untrusted.js';
import type { GitPort, LandGitPort } from '../engine/ports.js';

export function reclaimingTrees(git: GitPort, untrusted: Untrusted | undefined): GitPort {
  if (untrusted === undefined || !untrusted.isolated) return git;
  const reclaim = (path: string): Promise<void> => untrusted.reclaim([path]);
  return {
    ...git,
    addWorktree: async (path, branch) => {
      await reclaim(path);
      return git.addWorktree(path, branch);
    },
    detachedWorktree: async (path, sha) => {
      await reclaim(path);
      return git.detachedWorktree(path, sha);
    },
    removeWorktree: async (path) => {
      await reclaim(path);
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
      await untrusted.reclaim([path]);
      return git.landTree(path, sha);
    },
  };
}
