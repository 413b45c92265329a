/**
 * A tree an agent wrote, read by epicflow itself: every file opened without following a
 * link (`O_NOFOLLOW`, then checked to be a file), every link read as the path it holds,
 * each hashed as git hashes a blob, with no filter, attribute or config of git's in the
 * way. No git command of epicflow's stages, diffs or reads the status of such a tree:
 * git would read the tree's attributes, enter a repository nested in it and run its
 * filters or fsmonitor with epicflow's rights. Only `check-ignore --no-index` reads the
 * tree (its `.gitignore` files, never entering a nested repository: it is never asked
 * about a path in one), and the objects are written by object commands (`fast-import`,
 * `update-index --index-info` into an index of epicflow's own, `write-tree`).
 *
 * A folder holding `.git` is a repository nested in the tree: it is left out, never read,
 * never recorded as a gitlink (what the base tracks in it stays as the base has it). A
 * gitlink of the tree's base stays as the base has it.
 *
 * Paths here are git's bytes, one character per byte (`latin1`): a name that is not UTF-8 is
 * committed as it is, for the perimeter to refuse (`utf8Path` gives what the rest reads).
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  type BigIntStats,
  type Dirent,
} from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { NUL, splitNul } from './listings.js';
import { gitError, type GitRunner } from './run-git.js';

/** A path as its bytes, one character per byte (see the module comment). */
const asBytes = (path: string): Buffer => Buffer.from(path, 'latin1');

/** A path of bytes as the rest of epicflow reads it: UTF-8, what is not UTF-8 shown as U+FFFD. */
export function utf8Path(path: string): string {
  return asBytes(path).toString('utf8');
}

/** The file at `path` (bytes) under the tree's top. */
export function under(root: string, path: string): Buffer {
  return path === '' ? Buffer.from(root) : Buffer.concat([Buffer.from(`${root}/`), asBytes(path)]);
}

/** One entry of a git tree: a file (100644, 100755), a link (120000) or a gitlink (160000). */
export interface FileEntry {
  readonly mode: string;
  /** The blob (or a gitlink's commit); '' for an untracked file read without its contents. */
  readonly object: string;
}

const GITLINK = '160000';

/** What a tree holds as files. */
export interface FilesRead {
  /** Path → entry: every file and link not ignored, and the base's gitlinks. */
  readonly entries: Map<string, FileEntry>;
  /** The contents of every blob read that the base does not hold, by object id. */
  readonly contents: Map<string, Buffer>;
  /** Folders holding a repository of their own (`.git`), left out, sorted (UTF-8, see `utf8Path`). */
  readonly nested: string[];
  /** The same folders as bytes, ignored ones too (`ignored` says which): what a write-back removes. */
  readonly nestedAt: { readonly path: string; readonly ignored: boolean }[];
  /**
   * Every folder read that is not ignored, as bytes (the top is not one); a folder holding
   * a tracked path is listed whether ignored or not (its rule is not asked).
   */
  readonly folders: string[];
}

interface ReadFilesOptions {
  /** The tree's top folder. */
  readonly root: string;
  /** The base's entries: tracked paths are never ignored, its gitlinks are kept as they are. */
  readonly tracked: ReadonlyMap<string, FileEntry>;
  readonly objectFormat: 'sha1' | 'sha256';
  /** Of the untracked `paths`, those the tree's ignore rules leave out; null: none is left out. */
  readonly ignored: ((paths: readonly string[]) => Promise<Set<string>>) | null;
  /** Untracked files whose contents are read (all by default); the others' `object` is ''. */
  readonly hashUntracked?: (path: string) => boolean;
  /** Files read before, kept from one read to the next (see `ReadCache`). */
  readonly cache?: ReadCache;
  /** Only paths (and folders) this accepts are read; every path by default. */
  readonly only?: (path: string) => boolean;
}

/**
 * A file read before, by path: the blob it held and what identified it then (device,
 * inode, size, modification and change time, mode). A file that still shows the same is
 * not read again. Its change time is set by the kernel on every write, `utimes` and
 * `chmod`, and no process can put it back; a file changed within two seconds of being
 * read is not kept (a second write in the same clock tick would not move it).
 */
export type ReadCache = Map<string, { readonly stamp: string; readonly entry: FileEntry }>;

function stampOf(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;
}

/** Two seconds, in nanoseconds: a file changed more recently than this is not kept. */
const RACY_NS = 2_000_000_000n;

/** How many files are read before other work of the process gets its turn. */
const READ_AT_ONCE = 256;

/** The object id git gives a blob of `data`. */
function blobId(format: 'sha1' | 'sha256', data: Buffer): string {
  return createHash(format).update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** Folders that hold a tracked path, and the paths themselves' folders: `a`, `a/b` for `a/b/c`. */
function trackedFolders(tracked: ReadonlyMap<string, FileEntry>): Set<string> {
  const folders = new Set<string>();
  for (const path of tracked.keys()) {
    for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
      folders.add(path.slice(0, at));
    }
  }
  return folders;
}

/**
 * A file's contents and mode, opened without following a link; null when it is no file now.
 * Read synchronously (a few at a time, see `READ_AT_ONCE`): small files cost less so than
 * through the thread pool, four calls each.
 */
function readFile(full: Buffer): { data: Buffer; mode: string; stat: BigIntStats } | null {
  let fd: number;
  try {
    fd = openSync(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if (isGone(e)) return null;
    throw e;
  }
  try {
    // Before the contents: a write after it moves the change time, and the next read sees it.
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile()) return null;
    // Git records the owner's execute bit.
    const mode = (stat.mode & 0o100n) !== 0n ? '100755' : '100644';
    return { data: readFileSync(fd), mode, stat };
  } finally {
    closeSync(fd);
  }
}

/** Gone, or something else than was listed now (a link where a file was, a folder emptied). */
function isGone(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'EINVAL';
}

interface Folder {
  readonly path: string;
  /**
   * Below an ignored folder: only tracked paths count. Unknown (undefined) for a folder
   * that holds tracked paths whose own rule was not asked: it is entered either way, and
   * git answers each untracked path below it with the rules of every folder above it
   * (a path below an ignored folder is ignored, whatever else matches it).
   */
  readonly ignored: boolean | undefined;
}

/** Every file and link of the tree at `root` (see the module comment). */
export async function readFiles(options: ReadFilesOptions): Promise<FilesRead> {
  const { root, tracked } = options;
  const folders = trackedFolders(tracked);
  const trackedObjects = new Set([...tracked.values()].map((e) => e.object));
  const entries = new Map<string, FileEntry>();
  const contents = new Map<string, Buffer>();
  const nestedAt: { path: string; ignored: boolean }[] = [];
  const folderPaths: string[] = [];
  let level: Folder[] = [{ path: '', ignored: false }];
  while (level.length > 0) {
    const found: { path: string; dirent: Dirent; ignored: boolean | undefined }[] = [];
    const nestedHere: Folder[] = [];
    for (const folder of level) {
      let dirents: Dirent[];
      try {
        dirents = await readdir(under(root, folder.path), {
          withFileTypes: true,
          encoding: 'latin1',
        });
      } catch (e) {
        if (isGone(e)) continue;
        throw e;
      }
      // A repository of its own: never entered (the top's `.git` is the tree's own).
      if (folder.path !== '' && dirents.some((d) => d.name === '.git')) {
        // Whether it is ignored is asked with the level's other paths when still unknown.
        nestedHere.push(folder);
        // What the base tracks in it stays as the base has it: the story changes nothing there.
        const inside = `${folder.path}/`;
        for (const [path, entry] of tracked) if (path.startsWith(inside)) entries.set(path, entry);
        continue;
      }
      // A folder whose rule is unknown holds tracked paths: the target keeps it whatever it is.
      if (folder.path !== '' && folder.ignored !== true) folderPaths.push(folder.path);
      for (const dirent of dirents) {
        // Git records no `.git` in any spelling.
        if (dirent.name.toLowerCase() === '.git') continue;
        const path = folder.path === '' ? dirent.name : `${folder.path}/${dirent.name}`;
        if (options.only?.(path) === false) continue;
        const base = tracked.get(path);
        // A gitlink of the base stays as the base has it; what is at its path is not read.
        if (base?.mode === GITLINK) {
          entries.set(path, base);
          continue;
        }
        if (folder.ignored === true && base === undefined && !folders.has(path)) continue;
        found.push({ path, dirent, ignored: folder.ignored });
      }
    }
    // A folder holding tracked paths is entered whether ignored or not: its own rule is not
    // asked (only what is below it needs one). Every other untracked path is.
    const unasked = (f: (typeof found)[number]): boolean =>
      f.dirent.isDirectory() && folders.has(f.path);
    const ask = [
      ...found.filter((f) => f.ignored !== true && !tracked.has(f.path) && !unasked(f)),
      ...nestedHere.filter((n) => n.ignored === undefined),
    ].map((f) => f.path);
    const ignored =
      options.ignored === null || ask.length === 0 ? new Set<string>() : await options.ignored(ask);
    for (const n of nestedHere) {
      nestedAt.push({ path: n.path, ignored: n.ignored ?? ignored.has(n.path) });
    }
    const next: Folder[] = [];
    const files: string[] = [];
    for (const f of found) {
      const isIgnored = f.ignored === true || ignored.has(f.path);
      if (f.dirent.isDirectory()) {
        // An ignored folder is entered only for the paths the base tracks in it.
        if (unasked(f)) next.push({ path: f.path, ignored: isIgnored ? true : undefined });
        else if (!isIgnored) next.push({ path: f.path, ignored: false });
      } else if (f.dirent.isSymbolicLink()) {
        if (isIgnored && !tracked.has(f.path)) continue;
        let target: Buffer;
        try {
          target = await readlink(under(root, f.path), { encoding: 'buffer' });
        } catch (e) {
          if (isGone(e)) continue;
          throw e;
        }
        const object = blobId(options.objectFormat, target);
        entries.set(f.path, { mode: '120000', object });
        if (!trackedObjects.has(object)) contents.set(object, target);
      } else if (f.dirent.isFile()) {
        if (isIgnored && !tracked.has(f.path)) continue;
        files.push(f.path);
      }
      // Anything else (a socket, a fifo, a device) git does not record either.
    }
    for (const [i, path] of files.entries()) {
      if (i > 0 && i % READ_AT_ONCE === 0) await yieldToOthers();
      const untracked = !tracked.has(path);
      if (untracked && options.hashUntracked?.(path) === false) {
        entries.set(path, { mode: '100644', object: '' });
        continue;
      }
      const full = under(root, path);
      // Kept only for blobs the base holds: any other must be read to be written.
      const known = options.cache?.get(path);
      if (known !== undefined && trackedObjects.has(known.entry.object)) {
        const st = lstatSync(full, { bigint: true, throwIfNoEntry: false });
        if (st?.isFile() === true && stampOf(st) === known.stamp) {
          entries.set(path, known.entry);
          continue;
        }
      }
      const file = readFile(full);
      if (file === null) continue;
      const object = blobId(options.objectFormat, file.data);
      const entry = { mode: file.mode, object };
      entries.set(path, entry);
      if (!trackedObjects.has(object)) contents.set(object, file.data);
      if (BigInt(Date.now()) * 1_000_000n - file.stat.ctimeNs > RACY_NS) {
        options.cache?.set(path, { stamp: stampOf(file.stat), entry });
      } else {
        options.cache?.delete(path);
      }
    }
    level = next;
  }
  return {
    entries,
    contents,
    nested: nestedAt
      .filter((n) => !n.ignored)
      .map((n) => utf8Path(n.path))
      .sort(),
    nestedAt,
    folders: folderPaths,
  };
}

/** Paths whose entry differs between `before` and `after` (changed, added or gone): path → new object or null. */
export function differences(
  before: ReadonlyMap<string, FileEntry>,
  after: ReadonlyMap<string, FileEntry>,
): Map<string, string | null> {
  const changed = new Map<string, string | null>();
  for (const [path, entry] of after) {
    const was = before.get(path);
    if (was === undefined || was.mode !== entry.mode || was.object !== entry.object) {
      changed.set(path, entry.object);
    }
  }
  for (const path of before.keys()) if (!after.has(path)) changed.set(path, null);
  return changed;
}

/** The entries of a commit's tree, recursively (`ls-tree -r`: links and gitlinks as entries). */
export async function treeEntries(git: GitRunner, commit: string): Promise<Map<string, FileEntry>> {
  const r = await git.try(['ls-tree', '-r', '-z', '--full-tree', commit], { bytes: true });
  if (r.exitCode !== 0) throw gitError(`cannot list the files of ${commit}`, r);
  const entries = new Map<string, FileEntry>();
  for (const record of splitNul((r.stdoutBytes ?? Buffer.alloc(0)).toString('latin1'))) {
    // "<mode> SP <type> SP <object> TAB <path>"
    const tab = record.indexOf('\t');
    const [mode = '', , object = ''] = record.slice(0, tab).split(' ');
    entries.set(record.slice(tab + 1), { mode, object });
  }
  return entries;
}

/** The untracked `paths` the tree's ignore rules leave out (`check-ignore --no-index`). */
export async function ignoredPaths(
  git: GitRunner,
  where: string,
  paths: readonly string[],
): Promise<Set<string>> {
  // Each path behind `./`: a name that starts with `:` is never read as pathspec magic
  // (check-ignore takes no `--literal-pathspecs`); it answers each path as it was asked.
  const r = await git.try(['check-ignore', '--no-index', '--stdin', '-z'], {
    input: asBytes(paths.map((p) => `./${p}${NUL}`).join('')),
    bytes: true,
  });
  // 0: some are ignored, 1: none is.
  if (r.exitCode === 1) return new Set();
  if (r.exitCode !== 0) {
    throw gitError(`cannot read the ignore rules of ${where}`, r);
  }
  const out = (r.stdoutBytes ?? Buffer.alloc(0)).toString('latin1');
  return new Set(splitNul(out).map((p) => (p.startsWith('./') ? p.slice(2) : p)));
}

/**
 * Writes `contents` as blobs (`fast-import`: objects only) and the tree of `entries`
 * (`update-index --index-info` into `indexFile`, a fresh index of epicflow's own, then
 * `write-tree`, which fails on any object that is missing); returns the tree.
 */
export async function writeTree(
  git: GitRunner,
  where: string,
  files: Pick<FilesRead, 'entries' | 'contents'>,
  indexFile: string,
): Promise<string> {
  if (files.contents.size > 0) {
    const parts: Buffer[] = [];
    for (const data of files.contents.values()) {
      parts.push(Buffer.from(`blob\ndata ${data.length}\n`), data, Buffer.from('\n'));
    }
    await git.run(`cannot write the files of ${where}`, ['fast-import', '--quiet'], {
      input: Buffer.concat(parts),
    });
  }
  const lines = [...files.entries].map(([path, e]) => `${e.mode} ${e.object}\t${path}${NUL}`);
  await git.run(`cannot stage the files of ${where}`, ['update-index', '-z', '--index-info'], {
    input: asBytes(lines.join('')),
    indexFile,
  });
  return (await git.run(`cannot write the tree of ${where}`, ['write-tree'], { indexFile })).trim();
}
