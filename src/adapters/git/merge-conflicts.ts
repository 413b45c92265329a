/**
 * The conflicts a merge left in one work tree: listing them, and settling those `-X`
 * could not (each path taken as one side has it, then the merge committed). `Worktree`
 * calls these with its runner.
 */
import type { ProcessResult } from '../process/run-process.js';
import { LIST_FILES, NUL, splitNul } from './listings.js';
import { gitError, type GitRunner } from './run-git.js';

/** The paths a merge in progress left unmerged in the tree at `path`. */
export async function unmergedPaths(git: GitRunner, path: string): Promise<string[]> {
  // From the index alone (`<mode> <object> <stage>\t<path>` per conflict side): a diff
  // against the tree would enter a repository nested at a gitlink and run its config.
  const out = await git.run(`cannot list conflicts in ${path}`, ['ls-files', '--unmerged', '-z']);
  return [...new Set(splitNul(out).map((e) => e.slice(e.indexOf('\t') + 1)))];
}

/** Which of `paths` (files or prefixes) have at least one file in `ref`. */
async function existingIn(
  git: GitRunner,
  ref: string,
  paths: readonly string[],
): Promise<string[]> {
  const out = await git.run(`cannot list the files of ${ref}`, [...LIST_FILES, ref]);
  // Every file and every directory above it, so a prefix is one lookup.
  const present = new Set<string>();
  for (const file of splitNul(out)) {
    let at = file.length;
    while (at > 0) {
      present.add(file.slice(0, at));
      at = file.lastIndexOf('/', at - 1);
    }
  }
  return paths.filter((p) => present.has(p));
}

/**
 * A merge stopped on conflicts `-X` could not settle (a deletion against a change, a
 * binary file): each such path is taken as `side` has it (deleted when it has none),
 * and the merge is committed. Returns those paths.
 */
export async function settleConflictsAs(
  git: GitRunner,
  path: string,
  side: string,
  merge: ProcessResult,
  what: string,
): Promise<string[]> {
  const conflicts = await unmergedPaths(git, path);
  if (conflicts.length === 0) {
    await git.try(['merge', '--abort']);
    throw gitError(`cannot conclude ${what} in ${path}`, merge);
  }
  const present = new Set(await existingIn(git, side, conflicts));
  const take = conflicts.filter((p) => present.has(p));
  const drop = conflicts.filter((p) => !present.has(p));
  if (take.length > 0) {
    await git.run(
      `cannot take the ${side.slice(0, 12)} version of conflicting paths in ${path}`,
      ['checkout', side, '--pathspec-from-file=-', '--pathspec-file-nul'],
      { input: take.join(NUL), literalPathspecs: true },
    );
  }
  if (drop.length > 0) {
    await git.run(
      `cannot remove conflicting paths ${side.slice(0, 12)} deleted in ${path}`,
      ['rm', '-q', '-f', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'],
      { input: drop.join(NUL), literalPathspecs: true },
    );
  }
  await git.run(`cannot conclude ${what} in ${path}`, [
    'commit',
    '--no-verify',
    '--quiet',
    '--no-edit',
  ]);
  return conflicts;
}
