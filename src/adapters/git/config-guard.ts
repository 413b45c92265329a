/**
 * Git's own configuration of a repository lives outside the tree: the common
 * `config`, a worktree's `config.worktree`, `info/attributes` and `info/exclude`,
 * and a linked worktree's `.git` file and `commondir` (which say where that
 * configuration is). Code running in a worktree (an agent, or the tests it wrote
 * run as gates) can edit them, and epicflow's next git command would obey them
 * with epicflow's rights: a clean filter or merge driver runs a command, a proxy
 * or `insteadOf` sees a push. `-c` options cannot switch those off (filter and
 * driver names are free), so the guard keeps the bytes of these files from
 * before untrusted code ran and puts them back before epicflow runs git again.
 *
 * `info/exclude` is guarded too: it decides what `add -A` commits, so an edit
 * could hide a file from the commit (and the perimeter) while gates still see it.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import { chmod, lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { EpicflowError } from '../../core/errors.js';

type FileState =
  | { readonly kind: 'missing' }
  | { readonly kind: 'file'; readonly bytes: Buffer; readonly mode: number }
  | { readonly kind: 'symlink'; readonly target: string }
  /** A folder, FIFO or device: never a trusted state, always a change. */
  | { readonly kind: 'other' };

const MISSING: FileState = { kind: 'missing' };
const OTHER: FileState = { kind: 'other' };

function errorCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/**
 * The file as it is, never following a symlink and never blocking on a FIFO. Read at once,
 * not through the thread pool: a few small files, read before every git command while a
 * window is open, where four round trips each would cost more than the git command.
 */
function readState(path: string): FileState {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = errorCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') return MISSING;
    if (code === 'ELOOP') {
      try {
        return { kind: 'symlink', target: readlinkSync(path) };
      } catch {
        return OTHER; // it changed again meanwhile: a change either way
      }
    }
    throw e;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return OTHER;
    return { kind: 'file', bytes: readFileSync(fd), mode: stat.mode & 0o7777 };
  } finally {
    closeSync(fd);
  }
}

function sameState(a: FileState, b: FileState): boolean {
  if (a.kind === 'file') return b.kind === 'file' && a.bytes.equals(b.bytes);
  if (a.kind === 'symlink') return b.kind === 'symlink' && a.target === b.target;
  return a.kind === b.kind;
}

/** The real path of a file's folder; null when it is gone. */
function realFolder(path: string): string | null {
  try {
    return realpathSync(dirname(path));
  } catch {
    return null;
  }
}

interface GuardedFile {
  readonly label: string;
  readonly path: string;
  /** The real path of its folder when trusted: a folder swapped for a symlink is a change. */
  readonly folder: string | null;
  readonly state: FileState;
  refs: number;
}

function unchanged(file: GuardedFile): boolean {
  const now = readState(file.path);
  // A file that was not there only has to stay away; its folder may come and go.
  if (file.state.kind === 'missing') return now.kind === 'missing';
  return realFolder(file.path) === file.folder && sameState(file.state, now);
}

/** Puts one file back as trusted: written beside it and renamed over, so git never reads half of it. */
async function putBack(file: GuardedFile): Promise<void> {
  const folder = dirname(file.path);
  if (realFolder(file.path) !== file.folder) {
    // Its folder was replaced by a symlink, or removed: nothing is written or deleted through a link.
    try {
      if ((await lstat(folder)).isSymbolicLink()) await rm(folder, { force: true });
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') throw e;
    }
    if (file.state.kind !== 'missing') {
      await mkdir(folder, { recursive: true });
      const now = realFolder(file.path);
      if (now !== file.folder) {
        throw new EpicflowError('git', `cannot restore ${file.label}: its folder was moved`, {
          details: [`expected ${file.folder ?? 'no folder'}, found ${now ?? 'no folder'}`],
        });
      }
    }
  }
  if (file.state.kind === 'missing') {
    await rm(file.path, { recursive: true, force: true });
    return;
  }
  if (readState(file.path).kind === 'other') {
    await rm(file.path, { recursive: true, force: true });
  }
  const temp = join(folder, `.epicflow-restore-${randomBytes(6).toString('hex')}`);
  try {
    if (file.state.kind === 'file') {
      await writeFile(temp, file.state.bytes, { flag: 'wx', mode: file.state.mode });
      await chmod(temp, file.state.mode);
    } else if (file.state.kind === 'symlink') {
      await symlink(file.state.target, temp);
    }
    // A rename replaces a symlink (or file) in place, never following it.
    await rename(temp, file.path);
  } finally {
    await rm(temp, { force: true });
  }
}

/** A window in which untrusted code runs in one tree, and what was put back while it was open. */
export class GitConfigWindow {
  /** Labels of the files put back while the window was open. */
  readonly restored = new Set<string>();

  constructor(
    /** Labels of the files guarded for this window. */
    readonly files: readonly string[],
    readonly paths: readonly string[],
  ) {}
}

/** One file that configures git for a tree, with the label people see. */
export interface GitConfigPath {
  readonly label: string;
  readonly path: string;
}

/**
 * The files that configure git for a worktree, from `rev-parse --git-common-dir
 * --git-dir` (absolute). Labels are relative to the common dir's parent:
 * `.git/config`, `.git/worktrees/<id>/config.worktree`.
 */
export function gitConfigPaths(
  worktree: string,
  commonDir: string,
  gitDir: string,
): GitConfigPath[] {
  const top = dirname(commonDir);
  const at = (path: string): GitConfigPath => ({
    label: relative(top, path).split(sep).join('/'),
    path,
  });
  const paths = [
    at(join(commonDir, 'config')),
    at(join(gitDir, 'config.worktree')),
    at(join(commonDir, 'info', 'attributes')),
    at(join(commonDir, 'info', 'exclude')),
    // Objects from elsewhere: git would read (and merge, and push) commits it finds there.
    at(join(commonDir, 'objects', 'info', 'alternates')),
  ];
  if (gitDir !== commonDir) {
    // epicflow names a linked tree's admin folder itself; `commondir` and `gitdir` there
    // say where the repository and the tree are (for git's own bookkeeping, and for the
    // agent's git, which finds them through the tree's `.git` file).
    paths.push(at(join(gitDir, 'commondir')), at(join(gitDir, 'gitdir')), {
      label: "the worktree's .git file",
      path: join(worktree, '.git'),
    });
  }
  return paths;
}

/**
 * The trusted state of the files that configure git for one repository. While
 * any window is open, every git command epicflow runs checks them first (a few
 * small reads) and puts back what changed: with stories in parallel, one agent
 * may be running while another story commits or merges.
 */
export class GitConfigGuard {
  private readonly files = new Map<string, GuardedFile>();
  private readonly windows = new Set<GitConfigWindow>();
  private queue: Promise<unknown> = Promise.resolve();

  /** Opens a window: the files are trusted as they are (as they were, when another window is open). */
  async begin(paths: readonly GitConfigPath[]): Promise<GitConfigWindow> {
    return this.serial(async () => {
      await this.verify();
      const guarded: GitConfigPath[] = [];
      for (const p of paths) {
        const known = this.files.get(p.path);
        if (known !== undefined) {
          known.refs += 1;
          guarded.push(p);
          continue;
        }
        const state = readState(p.path);
        // Not a file git reads as configuration (the Action checkout's `.git` is a folder).
        if (state.kind === 'other') continue;
        this.files.set(p.path, { ...p, folder: realFolder(p.path), state, refs: 1 });
        guarded.push(p);
      }
      const window = new GitConfigWindow(
        guarded.map((p) => p.label),
        guarded.map((p) => p.path),
      );
      this.windows.add(window);
      return window;
    });
  }

  /** Closes a window: puts back whatever changed; returns the labels put back while it was open. */
  async end(window: GitConfigWindow): Promise<string[]> {
    return this.serial(async () => {
      if (!this.windows.has(window)) return [...window.restored];
      // A failed restore leaves the window open, so every later git command tries again first.
      await this.verify();
      this.windows.delete(window);
      for (const path of window.paths) {
        const file = this.files.get(path);
        if (file !== undefined && --file.refs === 0) this.files.delete(path);
      }
      return [...window.restored];
    });
  }

  /** Before a git command: with a window open, the files must be as trusted. */
  async check(): Promise<void> {
    if (this.windows.size === 0) return;
    await this.serial(() => this.verify());
  }

  private async verify(): Promise<void> {
    for (const file of this.files.values()) {
      if (unchanged(file)) continue;
      await putBack(file);
      // Any open window's code may have done it.
      for (const w of this.windows) w.restored.add(file.label);
    }
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
