/**
 * The repository's own record of its linked trees, read from its admin folders
 * (`<gitDir>/worktrees/<id>/gitdir` and `HEAD`) as `git worktree list` reads them, without
 * starting git. These folders are the repository's, never a tree's: code that ran in a tree
 * can replace the tree's `.git` file, not what the repository says of the tree.
 */
import { existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { WorktreeEntry } from './listings.js';
import { OBJECT_ID } from './objects.js';
import { utf8Path } from './tree-of-files.js';

/** A linked tree as its admin folder names it. */
interface AdminFolder {
  /** `<gitDir>/worktrees/<id>`. */
  readonly admin: string;
  /** The tree's top level, as the `gitdir` file names it (not canonicalised). */
  readonly path: string;
  /** The tree's `.git` file the `gitdir` file names: a tree without it is gone. */
  readonly dotGit: string;
}

/**
 * Every admin folder that names a tree; a folder another `worktree add` is still writing
 * (no `gitdir` file yet) or anything else that is not one is passed over.
 */
export function adminFolders(gitDir: string): AdminFolder[] {
  const admins = join(gitDir, 'worktrees');
  let ids: string[];
  try {
    ids = readdirSync(admins);
  } catch {
    return [];
  }
  const found: AdminFolder[] = [];
  for (const id of ids.sort()) {
    const admin = join(admins, id);
    const gitdirFile = join(admin, 'gitdir');
    try {
      if (!lstatSync(admin).isDirectory() || !lstatSync(gitdirFile).isFile()) continue;
      const points = readFileSync(gitdirFile, 'utf8').trim();
      if (points === '') continue;
      // Relative to the admin folder where git writes relative paths.
      const dotGit = resolve(admin, points);
      found.push({ admin, path: dirname(dotGit), dotGit });
    } catch {
      continue;
    }
  }
  return found;
}

/** What a `HEAD` file says: the branch it names (`refs/heads/…`), or the commit it holds. */
export function headOf(headFile: string): Pick<WorktreeEntry, 'head' | 'branch'> {
  let text: string;
  try {
    text = readFileSync(headFile, 'utf8').trim();
  } catch {
    return {};
  }
  if (text.startsWith('ref: ')) return { branch: text.slice('ref: '.length).trim() };
  return text === '' ? {} : { head: text };
}

/**
 * The trees of a repository as `git worktree list --porcelain` gives them, the main tree
 * (`root`) first: each with the branch its HEAD names, or its detached commit; a linked tree
 * whose folder is gone is `prunable`.
 */
export function listTrees(root: string, gitDir: string): WorktreeEntry[] {
  const main: WorktreeEntry = {
    path: root,
    prunable: false,
    bare: false,
    ...headOf(join(gitDir, 'HEAD')),
  };
  const linked = adminFolders(gitDir).map(({ admin, path, dotGit }): WorktreeEntry => ({
    path,
    prunable: !existsSync(dotGit),
    bare: false,
    ...headOf(join(admin, 'HEAD')),
  }));
  return [main, ...linked];
}

/** A file's text when it is a regular file (not a link, not a folder); null otherwise. */
function readPlain(file: string): string | null {
  try {
    return lstatSync(file).isFile() ? readFileSync(file, 'utf8').trim() : null;
  } catch {
    return null;
  }
}

/**
 * A branch's full name whose loose ref is a file under the common directory: `refs/heads/`
 * and parts git accepts (none empty, none starting with a dot, no space or newline).
 */
function isPlainBranch(ref: string): boolean {
  return (
    /^refs\/heads\/[^\0\n ]+$/.test(ref) &&
    !ref.split('/').some((part) => part === '' || part.startsWith('.'))
  );
}

/**
 * The commit a branch names (`refs/heads/…`), read from its loose ref in the common
 * directory: what `rev-parse --verify <ref>^{commit}` answers (git points a branch at
 * nothing but a commit), without starting git. Null where only git can tell (a packed
 * ref, no such branch, anything unexpected).
 */
export function branchFromFiles(commonDir: string, ref: string): string | null {
  if (!isPlainBranch(ref)) return null;
  const commit = readPlain(join(commonDir, ref));
  return commit !== null && OBJECT_ID.test(commit) ? commit : null;
}

/**
 * Whether the branch `ref` (`refs/heads/…`) does not exist, by the files alone: no loose
 * ref, and none in `packed-refs` (or no such file). False wherever only git can tell: a
 * name git would refuse, a repository whose refs are not files (reftable), a file that
 * cannot be read, or anything unexpected on the way.
 */
export function branchAbsentFromFiles(commonDir: string, ref: string): boolean {
  if (!isPlainBranch(ref) || existsSync(join(commonDir, 'reftable'))) return false;
  const missing = (file: string): boolean => {
    try {
      lstatSync(file);
      return false;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENOENT';
    }
  };
  if (!missing(join(commonDir, ref))) return false;
  const packed = join(commonDir, 'packed-refs');
  if (missing(packed)) return true;
  const text = readPlain(packed);
  return text !== null && !text.split('\n').some((line) => line.endsWith(` ${ref}`));
}

/**
 * The commit a tree's HEAD names, read from its git directory's `HEAD` file and, for a
 * branch, that branch's loose ref in the common directory: what `rev-parse HEAD` answers,
 * without starting git. Null where only git can tell (a packed ref, anything unexpected).
 */
export function headFromFiles(gitDir: string, commonDir: string): string | null {
  const head = readPlain(join(gitDir, 'HEAD'));
  if (head === null) return null;
  if (OBJECT_ID.test(head)) return head;
  const ref = /^ref: (refs\/heads\/[^\0\n]+)$/.exec(head)?.[1];
  return ref === undefined ? null : branchFromFiles(commonDir, ref);
}

/** Drops what a merge, cherry-pick or revert in progress left in a tree's git directory. */
export async function dropMergeState(gitDir: string): Promise<void> {
  const files = ['MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'AUTO_MERGE', 'CHERRY_PICK_HEAD'];
  for (const name of [...files, 'REVERT_HEAD']) {
    await rm(join(gitDir, name), { force: true });
  }
}

/** The file in a tree's admin folder that names the files setup made in the tree (epicflow's). */
const SET_ASIDE = 'epicflow-set-aside.json';

/**
 * Notes in a linked tree's admin folder the new files set aside from its commits (`made`,
 * what setup made there; paths as bytes, see tree-of-files.ts): a sandboxed step's git
 * leaves them out of its status (step-repository.ts). Nothing for the main tree (`gitDir`
 * is the common one).
 */
export async function noteSetAside(
  gitDir: string,
  commonDir: string,
  made: readonly string[],
): Promise<void> {
  if (gitDir === commonDir) return;
  await writeFile(join(gitDir, SET_ASIDE), `${JSON.stringify(made.map(utf8Path))}\n`);
}

/** The files noted as made by setup in the tree of `admin`; none without a note of ours. */
export function setAsideOf(admin: string): string[] {
  const text = readPlain(join(admin, SET_ASIDE));
  if (text === null) return [];
  try {
    const read: unknown = JSON.parse(text);
    return Array.isArray(read) ? read.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
