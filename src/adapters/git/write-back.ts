/**
 * Putting a tree back, by epicflow itself: a folder an agent (or a gate, or setup) wrote is
 * made to hold exactly a commit's files, with no git command over it. Git would check the
 * files out through the tree's attributes (a filter driver runs with epicflow's rights),
 * follow a link planted where a folder should be, or enter a repository nested in it.
 *
 * What is there was read without following a link (tree-of-files.ts); only paths that differ
 * from the target are touched, so the cost is what changed, not the tree's size. Each entry is
 * removed as itself (`unlink`, or a folder with what it holds, links never followed); every
 * folder on the way to a path is checked to be a folder (`lstat`), and anything else there is
 * removed first; files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` (an entry that came
 * back meanwhile makes the write fail, never follows it), their contents read from git's
 * objects (`cat-file --batch`), links made with `symlink`. A gitlink is never created.
 *
 * Every process of a step has ended before its tree is put back: between the check of a
 * folder and the write below it, nothing else writes the tree.
 */
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  rmSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { EpicflowError } from '../../core/errors.js';
import { readBlobs } from './objects.js';
import type { GitRunner } from './run-git.js';
import { under, type FileEntry, type FilesRead } from './tree-of-files.js';

const GITLINK = '160000';
const LINK = '120000';

/** How many blobs one `cat-file --batch` reads, and how many files are written between turns. */
const AT_ONCE = 512;

/** What a write-back changed: paths (bytes) written and removed. */
interface WrittenBack {
  readonly written: number;
  readonly removed: number;
}

interface WriteBackOptions {
  /** The tree's top folder. */
  readonly root: string;
  /** What the tree holds, read against `target` (`readFiles` with `target` as the base). */
  readonly now: Pick<FilesRead, 'entries' | 'nestedAt' | 'folders'>;
  /** The entries the tree must hold (`treeEntries` of the target commit). */
  readonly target: ReadonlyMap<string, FileEntry>;
  /** Only paths (bytes) this accepts are touched; every path by default. */
  readonly within?: (path: string) => boolean;
  /** Paths removed too, ignored or not, unless the target has them (what setup left). */
  readonly alsoRemove?: readonly string[];
}

/** Whether `path` or a folder above it is in `folders`. */
export function inside(folders: ReadonlySet<string>, path: string): boolean {
  if (folders.size === 0) return false;
  for (let at = path.length; at > 0; at = path.lastIndexOf('/', at - 1)) {
    if (folders.has(path.slice(0, at))) return true;
  }
  return false;
}

/** Accepts each of `paths`, what is below them, and the folders above them. */
export function nearTo(paths: ReadonlySet<string>): (path: string) => boolean {
  const folders = foldersOf(paths);
  return (path) => folders.has(path) || inside(paths, path);
}

/** The folders that hold `paths`: `a`, `a/b` for `a/b/c`. */
function foldersOf(paths: Iterable<string>): Set<string> {
  const folders = new Set<string>();
  for (const path of paths) {
    for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
      folders.add(path.slice(0, at));
    }
  }
  return folders;
}

const same = (a: FileEntry | undefined, b: FileEntry | undefined): boolean =>
  a !== undefined && b !== undefined && a.mode === b.mode && a.object === b.object;

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/** Whether every folder above `path` is a folder (not a link, not gone). */
function foldersAbove(root: string, path: string): boolean {
  for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
    const st = lstatSync(under(root, path.slice(0, at)), { throwIfNoEntry: false });
    if (st?.isDirectory() !== true) return false;
  }
  return true;
}

/** Removes the entry at `path` itself: a link or a file unlinked, a folder with all it holds. */
function removeEntry(root: string, path: string): boolean {
  if (!foldersAbove(root, path)) return false;
  const full = under(root, path);
  const st = lstatSync(full, { throwIfNoEntry: false });
  if (st === undefined) return false;
  // `rm` never follows a link inside the folder either: it unlinks it.
  if (st.isDirectory()) rmSync(full, { recursive: true, force: true });
  else unlinkSync(full);
  return true;
}

/** Every folder above `path` made a real folder: whatever else stands there is removed first. */
function makeFolders(root: string, path: string): void {
  for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
    const full = under(root, path.slice(0, at));
    const st = lstatSync(full, { throwIfNoEntry: false });
    if (st?.isDirectory() === true) continue;
    if (st !== undefined) unlinkSync(full);
    mkdirSync(full);
  }
}

/** Writes `entry` at `path` (nothing may be there): a file created exclusively, or a link. */
function createEntry(root: string, path: string, entry: FileEntry, data: Uint8Array): void {
  const full = under(root, path);
  if (entry.mode === LINK) {
    symlinkSync(Buffer.from(data), full);
    return;
  }
  // The process's umask applies, as to git's own checkout.
  const mode = entry.mode === '100755' ? 0o777 : 0o666;
  const fd = openSync(
    full,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    for (let at = 0; at < data.length;) at += writeSync(fd, data, at, data.length - at);
  } finally {
    closeSync(fd);
  }
}

/** Removes `path`'s folders upwards while they are empty and the target has none of them. */
function pruneFolders(root: string, path: string, keep: ReadonlySet<string>): void {
  for (let at = path.lastIndexOf('/'); at > 0; at = path.lastIndexOf('/', at - 1)) {
    const folder = path.slice(0, at);
    if (keep.has(folder) || !removeEmptyFolder(root, folder)) return;
  }
}

/** `rmdir` of a folder that holds nothing; false when it holds something or is no folder. */
function removeEmptyFolder(root: string, folder: string): boolean {
  try {
    if (!foldersAbove(root, folder)) return false;
    rmdirSync(under(root, folder));
    return true;
  } catch (e) {
    const c = code(e);
    if (c === 'ENOTEMPTY' || c === 'EEXIST' || c === 'ENOENT' || c === 'ENOTDIR') return false;
    throw e;
  }
}

/**
 * Makes the folder `root` hold exactly `target` (see the module comment): every path (within
 * `within`) whose entry differs is removed and written again; what the tree holds that the
 * target has not is removed, ignored files that `now` left out excepted; a repository nested
 * in the tree (not ignored, or holding a path of the target) is removed whole; folders left
 * empty go. The index and HEAD are the caller's.
 */
export async function writeBack(git: GitRunner, options: WriteBackOptions): Promise<WrittenBack> {
  const { root, now, target } = options;
  const within = options.within ?? (() => true);
  const keep = foldersOf(target.keys());
  const nested = new Set(
    now.nestedAt
      .filter((n) => within(n.path) && (!n.ignored || keep.has(n.path)))
      .map((n) => n.path),
  );
  const remove: string[] = [];
  for (const [path, entry] of now.entries) {
    if (!within(path) || inside(nested, path)) continue;
    const wanted = target.get(path);
    if (wanted?.mode === GITLINK || same(entry, wanted)) continue;
    remove.push(path);
  }
  const write: [string, FileEntry][] = [];
  for (const [path, entry] of target) {
    if (entry.mode === GITLINK || !within(path)) continue;
    // Git checks out no such path either: it would plant a repository in the tree.
    if (path.split('/').some((part) => part.toLowerCase() === '.git')) {
      throw new EpicflowError('git', `refusing to write ${JSON.stringify(path)} in ${root}`);
    }
    if (inside(nested, path) || !same(now.entries.get(path), entry)) write.push([path, entry]);
  }
  for (const path of options.alsoRemove ?? []) {
    if (!target.has(path) && !now.entries.has(path)) remove.push(path);
  }
  let removed = 0;
  for (const folder of nested) if (removeEntry(root, folder)) removed += 1;
  for (const path of remove) {
    if (removeEntry(root, path)) removed += 1;
    pruneFolders(root, path, keep);
  }
  for (let i = 0; i < write.length; i += AT_ONCE) {
    const part = write.slice(i, i + AT_ONCE);
    const blobs = await readBlobs(
      git,
      part.map(([, e]) => e.object),
    );
    for (const [path, entry] of part) {
      const data = blobs.get(entry.object);
      if (data === undefined) {
        throw new EpicflowError('git', `cannot write ${root}: blob ${entry.object} is missing`);
      }
      makeFolders(root, path);
      removeEntry(root, path);
      createEntry(root, path, entry, data);
    }
    await yieldToOthers();
  }
  // Folders the tree held that the target has none of (their files gone above): deepest first.
  const folders = now.folders.filter((f) => within(f) && !keep.has(f) && !inside(nested, f));
  for (const folder of folders.sort((a, b) => b.length - a.length)) {
    if (removeEmptyFolder(root, folder)) removed += 1;
  }
  return { written: write.length, removed };
}
