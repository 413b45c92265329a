/**
 * `epicflow clean` and the end of a landing: an epic's worktrees and the story branches it
 * no longer needs go. A story branch merged into the epic branch is deleted; an unmerged one
 * is kept (with its worktree, which may hold the only copy of work) unless forced, and
 * the reason is said. The epic branch and the epic's records stay.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { Git } from '../../adapters/git/index.js';
import { epicBranchName, storyBranchName } from '../../core/model.js';
import { epicFolders } from './local-epics.js';

interface CleanOutcome {
  readonly removedWorktrees: readonly string[];
  readonly deletedBranches: readonly { readonly branch: string; readonly merged: boolean }[];
  readonly kept: readonly { readonly branch: string; readonly reason: string }[];
}

interface WorktreeEntry {
  readonly path: string;
  /** `refs/heads/…`, or undefined when detached. */
  readonly branch: string | undefined;
}

function parseWorktrees(out: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let path: string | undefined;
  let branch: string | undefined;
  for (const field of [...out.split('\0'), '']) {
    if (field === '') {
      if (path !== undefined) entries.push({ path, branch });
      path = undefined;
      branch = undefined;
    } else if (field.startsWith('worktree ')) {
      path = field.slice('worktree '.length);
    } else if (field.startsWith('branch ')) {
      branch = field.slice('branch '.length);
    }
  }
  return entries;
}

function inside(path: string, dir: string): boolean {
  const p = resolve(path);
  const d = resolve(dir);
  return p === d || p.startsWith(`${d}${sep}`);
}

/** Removes the epic's worktrees and its merged story branches (every one with `force`). */
export async function cleanEpic(
  repo: Git,
  epic: string,
  options: { readonly force: boolean; readonly worktreesDir?: string | undefined },
): Promise<CleanOutcome> {
  const epicBranch = epicBranchName(epic);
  const prefix = `refs/heads/${storyBranchName(epic, '')}`;
  const worktreesDir = options.worktreesDir ?? epicFolders(repo, epic).worktrees;
  const epicExists = (await repo.revParse(`refs/heads/${epicBranch}`)) !== null;
  const branches = (
    await repo.read(`cannot list the story branches of ${epic}`, [
      'for-each-ref',
      '--format=%(refname)',
      prefix,
    ])
  )
    .split('\n')
    .filter((b) => b.startsWith(prefix));
  const worktrees = parseWorktrees(
    await repo.read('cannot list worktrees', ['worktree', 'list', '--porcelain', '-z']),
  );
  const mainTree = worktrees[0]?.path;

  const removedWorktrees: string[] = [];
  const deletedBranches: { branch: string; merged: boolean }[] = [];
  const kept: { branch: string; reason: string }[] = [];
  const keptRefs = new Set<string>();
  for (const ref of branches) {
    const branch = ref.slice('refs/heads/'.length);
    const merged = epicExists && (await repo.isAncestor(ref, `refs/heads/${epicBranch}`));
    const checkedOut = worktrees.find((w) => w.branch === ref);
    if (checkedOut !== undefined && checkedOut.path === mainTree) {
      kept.push({ branch, reason: `it is checked out in ${checkedOut.path}` });
      keptRefs.add(ref);
    } else if (!merged && !options.force) {
      kept.push({
        branch,
        reason: `not merged into ${epicBranch}${epicExists ? '' : ' (which does not exist)'}: its commits would be lost; --force deletes it${checkedOut === undefined ? '' : ' and its worktree'}`,
      });
      keptRefs.add(ref);
    } else {
      if (checkedOut !== undefined) {
        await repo.removeWorktree(checkedOut.path);
        removedWorktrees.push(checkedOut.path);
      }
      await repo.read(`cannot delete ${branch}`, ['branch', '-D', '--', branch]);
      deletedBranches.push({ branch, merged });
    }
  }
  // The rest under the epic's worktree folder: its integration and landing trees.
  for (const w of worktrees) {
    if (w.path === mainTree || removedWorktrees.includes(w.path)) continue;
    if (w.branch !== undefined && keptRefs.has(w.branch)) continue;
    if (w.branch !== undefined && w.branch.startsWith(prefix)) continue;
    if (!inside(w.path, worktreesDir)) continue;
    await repo.removeWorktree(w.path);
    removedWorktrees.push(w.path);
  }
  await repo.read('cannot prune worktrees', ['worktree', 'prune']);
  if (kept.length === 0 && existsSync(worktreesDir)) {
    await rm(worktreesDir, { recursive: true, force: true });
  }
  return { removedWorktrees, deletedBranches, kept };
}

/** What was done, one line each, for people. */
export function cleanLines(outcome: CleanOutcome): string[] {
  return [
    ...outcome.removedWorktrees.map((p) => `removed worktree ${p}`),
    ...outcome.deletedBranches.map(
      (b) => `deleted ${b.branch}${b.merged ? ' (merged)' : ' (not merged: --force)'}`,
    ),
    ...outcome.kept.map((k) => `kept ${k.branch}: ${k.reason}`),
  ];
}
