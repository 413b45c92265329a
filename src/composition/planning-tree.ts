/**
 * The read-only checkout a planner or a retro's model call works in (`PlanningGit`):
 * made fresh at the commit it reads, removed with whatever was left in it. One wiring for
 * `epicflow plan`, `epicflow retro` and their GitHub jobs.
 */
import type { Git } from '../adapters/git/index.js';
import type { PlanningGit, PlanningTree } from '../engine/plan-epic.js';

export function planningGit(git: Git, treePath: string): PlanningGit {
  return {
    listFiles: (sha) => git.listFiles(sha),
    checkout: async (sha): Promise<PlanningTree> => {
      await git.removeWorktree(treePath);
      await git.addWorktree(treePath, sha);
      return git.worktree(treePath);
    },
    release: () => git.removeWorktree(treePath),
  };
}
