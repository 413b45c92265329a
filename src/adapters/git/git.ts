/**
 * Git for the engine: branches and refs of the user's repository (never its
 * checkout), story worktrees, catch-up and integration merges, and the diff a
 * perimeter is enforced on. Every command goes through `GitRunner`, which
 * disables hooks; every failure is an `EpicflowError('git', …)`.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import {
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  realpath,
  rename,
  rm,
  stat,
  utimes,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import type { ProcessResult } from '../process/run-process.js';
import type { TreeFile } from '../../core/prompt/starting-code.js';
import {
  GitConfigGuard,
  GitConfigWindow,
  gitConfigPaths,
  type GitConfigPath,
} from './config-guard.js';
import {
  GitRunner,
  gitError,
  readConfiguredIdentity,
  type GitIdentity,
  type GitLocation,
} from './run-git.js';

export type { GitIdentity } from './run-git.js';

export interface ChangedPath {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'type-changed';
  oldPath?: string;
  mode: 'file' | 'executable' | 'symlink' | 'submodule';
  /** For a symlink: where it points (as stored in the link). */
  symlinkTarget?: string;
}

/** The identity used when neither the caller nor the repository configures one. */
export const DEFAULT_IDENTITY: GitIdentity = { name: 'epicflow', email: 'epicflow@localhost' };

const NUL = '\0';

/**
 * Before every diff epicflow reads: what changed, as git stores it, whatever
 * the tree's `.gitattributes` (`-diff`, `diff=<driver>`), `.gitmodules`
 * (`ignore = all`) or the config (a textconv, an external diff, colour, other
 * prefixes) say. Those would hide changes from the perimeter, the judge and
 * the oracle guard, or change the text they parse.
 */
const DIFF_AS_STORED = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--ignore-submodules=none',
  '--no-relative',
];

/** A unified diff as people and the oracle guard read it: every file as text, `a/` and `b/`. */
const PATCH_AS_TEXT = [...DIFF_AS_STORED, '--text', '--src-prefix=a/', '--dst-prefix=b/'];

function splitNul(text: string): string[] {
  return text.split(NUL).filter((s) => s !== '');
}

/** A real path when it exists, so `/tmp` and `/private/tmp` compare equal. */
function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    // Missing: canonicalise the nearest existing parent.
    const parent = dirname(abs);
    if (parent === abs) return abs;
    return resolve(canonical(parent), abs.slice(parent.length + 1));
  }
}

function checkRefName(ref: string): void {
  if (ref === '' || ref.startsWith('-') || /[\0\n]/.test(ref)) {
    throw new EpicflowError('git', `invalid ref name: ${JSON.stringify(ref)}`);
  }
}

function fullBranchRef(ref: string): string {
  return ref.startsWith('refs/') ? ref : `refs/heads/${ref}`;
}

interface WorktreeEntry {
  path: string;
  head?: string;
  branch?: string;
  prunable: boolean;
  bare: boolean;
}

function parseWorktreeList(porcelainZ: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | undefined;
  // `-z`: attributes end with NUL, an entry ends with an empty attribute.
  for (const field of porcelainZ.split(NUL)) {
    if (field === '') {
      if (current) entries.push(current);
      current = undefined;
      continue;
    }
    const space = field.indexOf(' ');
    const key = space < 0 ? field : field.slice(0, space);
    const value = space < 0 ? '' : field.slice(space + 1);
    if (key === 'worktree') {
      if (current) entries.push(current);
      current = { path: value, prunable: false, bare: false };
    } else if (current) {
      if (key === 'HEAD') current.head = value;
      else if (key === 'branch') current.branch = value;
      else if (key === 'prunable') current.prunable = true;
      else if (key === 'bare') current.bare = true;
    }
  }
  if (current) entries.push(current);
  return entries;
}

/** Paths of `git status --porcelain -z` output (both sides of a rename). */
function parseStatusPaths(porcelainZ: string): string[] {
  const fields = porcelainZ.split(NUL);
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as string;
    if (field.length < 4) continue;
    const xy = field.slice(0, 2);
    paths.push(field.slice(3));
    // A rename or copy is followed by its source path in the next field.
    if (xy.includes('R') || xy.includes('C')) {
      const from = fields[i + 1];
      if (from !== undefined && from !== '') paths.push(from);
      i++;
    }
  }
  return paths;
}

export class Git {
  /** Top level of the main work tree. */
  readonly root: string;
  /** The common git directory (absolute), shared by all worktrees: `<root>/.git` usually. */
  readonly gitDir: string;
  private readonly git: GitRunner;
  private readonly identity: GitIdentity;
  /** Shared by every tree of the repository: they share its configuration. */
  private readonly guard = new GitConfigGuard();

  /** Each linked tree's admin folder (`<gitDir>/worktrees/<id>`), by the tree's real path. */
  private readonly admins = new Map<string, string>();
  /** The index guard of each tree, by its git directory: every `Worktree` of a tree shares it. */
  private readonly indexes = new Map<string, IndexGuard>();
  /** The last worktree addition or removal queued (see `oneAdminAtATime`). */
  private adminQueue: Promise<unknown> = Promise.resolve();

  private indexGuardOf(gitDir: string): IndexGuard {
    let guard = this.indexes.get(gitDir);
    if (guard === undefined) {
      guard = new IndexGuard(join(gitDir, 'index'));
      this.indexes.set(gitDir, guard);
    }
    return guard;
  }

  private constructor(root: string, gitDir: string, identity: GitIdentity) {
    this.root = root;
    this.gitDir = gitDir;
    this.identity = identity;
    this.git = new GitRunner(root, identity, this.guard, { gitDir, workTree: root });
  }

  /** Opens the repository containing `dir`; `EpicflowError('git')` when there is none. */
  static async open(dir: string, identity?: GitIdentity): Promise<Git> {
    const notRepo = (): EpicflowError => new EpicflowError('git', `not a git repository: ${dir}`);
    if (!existsSync(dir)) throw notRepo();
    const probe = new GitRunner(dir, undefined);
    const inside = await probe.try(['rev-parse', '--is-inside-work-tree']);
    if (inside.exitCode !== 0 || inside.stdout.trim() !== 'true') throw notRepo();
    const commonDir = (
      await probe.run(`cannot read the git directory of ${dir}`, [
        'rev-parse',
        '--path-format=absolute',
        '--git-common-dir',
      ])
    ).trim();
    const list = await probe.run(`cannot list the worktrees of ${dir}`, [
      'worktree',
      'list',
      '--porcelain',
      '-z',
    ]);
    const main = parseWorktreeList(list)[0];
    if (!main || main.bare) throw notRepo();
    return new Git(main.path, commonDir, identity ?? (await configuredIdentity(dir)));
  }

  /** The commit a ref or sha names; null when missing. */
  async revParse(ref: string): Promise<string | null> {
    checkRefName(ref);
    const r = await this.git.try(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return r.exitCode === 0 ? r.stdout.trim() : null;
  }

  /** The branch checked out in the main work tree; null when HEAD is detached. */
  async currentBranch(): Promise<string | null> {
    const r = await this.git.try(['symbolic-ref', '--quiet', '--short', 'HEAD']);
    return r.exitCode === 0 ? r.stdout.trim() : null;
  }

  /**
   * Uncommitted and untracked paths of a work tree (default: the main one);
   * with `untracked: false`, only changes to tracked files.
   */
  async dirtyPaths(
    dir?: string,
    options: { readonly untracked?: boolean } = {},
  ): Promise<string[]> {
    const runner = dir === undefined ? this.git : this.runnerOf(dir);
    const out = await runner.run(`cannot read the status of ${dir ?? this.root}`, [
      'status',
      '--porcelain=v1',
      '-z',
      options.untracked === false ? '--untracked-files=no' : '--untracked-files=all',
    ]);
    return parseStatusPaths(out);
  }

  /** HEAD of the user's checkout: where a new epic branch starts. */
  async defaultBase(): Promise<string> {
    const sha = await this.revParse('HEAD');
    if (sha === null) {
      throw new EpicflowError('git', `the repository has no commits yet: ${this.root}`, {
        details: ['commit something first, then run epicflow again'],
      });
    }
    return sha;
  }

  /**
   * Creates a branch at a commit without touching any checkout. Idempotent when
   * the branch already points there; a branch at another commit is an error.
   */
  async createBranch(name: string, atSha: string): Promise<void> {
    checkRefName(name);
    const existing = await this.revParse(fullBranchRef(name));
    if (existing !== null) {
      if (existing === (await this.revParse(atSha))) return;
      throw new EpicflowError('git', `branch already exists: ${name}`, {
        details: [`it points at ${existing}, not ${atSha}`],
      });
    }
    await this.git.run(`cannot create branch ${name} at ${atSha}`, [
      'branch',
      '--no-track',
      '--',
      name,
      atSha,
    ]);
  }

  /** Deletes a branch; a missing branch is fine. */
  async deleteBranch(name: string): Promise<void> {
    checkRefName(name);
    if ((await this.revParse(fullBranchRef(name))) === null) return;
    await this.git.run(`cannot delete branch ${name}`, ['branch', '-D', '--', name]);
  }

  /**
   * Compare-and-swap of a ref (`refs/...`, or a branch name). `expectedOldSha`
   * null means the ref must not exist yet. False when the ref was elsewhere.
   */
  async updateRef(ref: string, newSha: string, expectedOldSha: string | null): Promise<boolean> {
    checkRefName(ref);
    const full = fullBranchRef(ref);
    const r = await this.git.try([
      'update-ref',
      '-m',
      'epicflow',
      full,
      newSha,
      expectedOldSha ?? '',
    ]);
    if (r.exitCode === 0) return true;
    const now = await this.revParse(full);
    if (now !== expectedOldSha) return false;
    throw gitError(`cannot update ${full} to ${newSha}`, r);
  }

  /**
   * Checks out an existing branch in a worktree at `path`, or, when `branch`
   * names a commit rather than a branch, a detached HEAD at that commit (an
   * integration tree). A tree already at `path` is never reused as found (code
   * that ran there may have written anything into it): it is removed and checked
   * out anew. A stale registration is pruned first.
   */
  async addWorktree(path: string, branch: string): Promise<void> {
    return this.oneAdminAtATime(() => this.addWorktreeNow(path, branch));
  }

  /**
   * Worktree additions, removals and prunes of this repository, one at a time: git reads
   * every admin folder while it adds one, and fails on a folder another `worktree add` is
   * still writing ("failed to read …/commondir"); a prune could take such a folder away.
   */
  private oneAdminAtATime<T>(work: () => Promise<T>): Promise<T> {
    const done = this.adminQueue.then(work, work);
    this.adminQueue = done.catch(() => undefined);
    return done;
  }

  private async addWorktreeNow(path: string, branch: string): Promise<void> {
    checkRefName(branch);
    await this.git.run('cannot prune stale worktrees', ['worktree', 'prune']);
    const target = canonical(path);
    const ref = fullBranchRef(branch);
    const isBranch = (await this.revParse(ref)) !== null;
    const sha = isBranch ? null : await this.revParse(branch);
    if (!isBranch && sha === null) {
      throw new EpicflowError(
        'git',
        `cannot add a worktree at ${path}: no branch or commit ${branch}`,
      );
    }
    const entries = await this.listWorktrees();
    if (entries.some((e) => canonical(e.path) === target)) await this.removeWorktreeNow(path);
    // A folder left behind (a tree whose registration was pruned): its content is no one's.
    await rm(target, { recursive: true, force: true });
    await mkdir(dirname(target), { recursive: true });
    await this.git.run(`cannot add a worktree for ${branch} at ${path}`, [
      'worktree',
      'add',
      ...(isBranch ? ['--', target, branch] : ['--detach', '--', target, sha as string]),
    ]);
    this.admins.delete(target);
    // The index `worktree add` just wrote is epicflow's.
    const fresh = new IndexGuard(join(this.locationOf(target).gitDir, 'index'));
    await fresh.settle();
    this.indexes.set(this.locationOf(target).gitDir, fresh);
  }

  /** Removes a worktree (even with uncommitted changes); a missing one is fine. */
  async removeWorktree(path: string): Promise<void> {
    return this.oneAdminAtATime(() => this.removeWorktreeNow(path));
  }

  private async removeWorktreeNow(path: string): Promise<void> {
    const target = canonical(path);
    const entries = await this.listWorktrees();
    const here = entries.find((e) => canonical(e.path) === target);
    if (!here) return;
    if (here.prunable || !existsSync(target)) {
      await this.git.run('cannot prune stale worktrees', ['worktree', 'prune']);
      return;
    }
    await this.git.run(`cannot remove the worktree at ${path}`, [
      'worktree',
      'remove',
      '--force',
      '--force',
      '--',
      target,
    ]);
    this.admins.delete(target);
  }

  /** A tree of this repository (the main one, or a linked worktree) by its path. */
  worktree(path: string): Worktree {
    const location = this.locationOf(path);
    return new Worktree(
      location,
      this.gitDir,
      this.identity,
      this.guard,
      this.indexGuardOf(location.gitDir),
    );
  }

  /**
   * Where a tree's git state is, found from the repository's side (the admin
   * folders' `gitdir` files), never from the tree's own `.git`, which the code
   * that ran in the tree could have replaced.
   */
  private locationOf(path: string): Required<GitLocation> {
    const workTree = canonical(isAbsolute(path) ? path : resolve(this.root, path));
    if (workTree === canonical(this.root)) return { gitDir: this.gitDir, workTree };
    const known = this.admins.get(workTree);
    if (known !== undefined) return { gitDir: known, workTree };
    const admins = join(this.gitDir, 'worktrees');
    let ids: string[] = [];
    try {
      ids = readdirSync(admins);
    } catch {
      ids = [];
    }
    for (const id of ids) {
      const admin = join(admins, id);
      const gitdirFile = join(admin, 'gitdir');
      try {
        if (!lstatSync(admin).isDirectory() || !lstatSync(gitdirFile).isFile()) continue;
        const points = readFileSync(gitdirFile, 'utf8').trim();
        if (canonical(dirname(points)) !== workTree) continue;
      } catch {
        continue;
      }
      this.admins.set(workTree, admin);
      return { gitDir: admin, workTree };
    }
    throw new EpicflowError('git', `${path} is not a worktree of ${this.root}`, {
      details: [`no folder under ${admins} names it`],
    });
  }

  private runnerOf(path: string): GitRunner {
    const location = this.locationOf(path);
    return new GitRunner(location.workTree, this.identity, this.guard, location);
  }

  private async listWorktrees(): Promise<WorktreeEntry[]> {
    const out = await this.git.run('cannot list worktrees', [
      'worktree',
      'list',
      '--porcelain',
      '-z',
    ]);
    return parseWorktreeList(out);
  }

  /**
   * The unified diff of `head` against its merge base with `base`: what the
   * judge reads and the oracle guard checks. Every change shows as text lines,
   * whatever the tree or the config would make git hide (`PATCH_AS_TEXT`).
   */
  async diff(base: string, head: string): Promise<string> {
    checkRefName(base);
    checkRefName(head);
    return this.git.run(`cannot diff ${head} against ${base}`, [
      'diff',
      ...PATCH_AS_TEXT,
      `${base}...${head}`,
      '--',
    ]);
  }

  /** Every file of a commit, repository-relative, in git's order (what a planner may read). */
  async listFiles(ref: string): Promise<string[]> {
    checkRefName(ref);
    const out = await this.git.run(`cannot list the files of ${ref}`, [
      'ls-tree',
      '-r',
      '-z',
      '--name-only',
      '--full-tree',
      ref,
    ]);
    return splitNul(out);
  }

  /**
   * Every entry of a commit's tree, recursively, with its mode, object id and size
   * (`ls-tree -r -l`): what a story's starting code is chosen from. Read from git's
   * objects, never from a work tree, so no link in a tree is ever followed.
   */
  async treeFiles(commit: string): Promise<TreeFile[]> {
    checkRefName(commit);
    const out = await this.git.run(`cannot list the files of ${commit}`, [
      'ls-tree',
      '-r',
      '-l',
      '-z',
      '--full-tree',
      commit,
    ]);
    return splitNul(out).map((record) => {
      // "<mode> SP <type> SP <object> SP+ <size or -> TAB <path>"
      const tab = record.indexOf('\t');
      const [mode = '', , object = '', size = ''] = record.slice(0, tab).split(/ +/);
      return { path: record.slice(tab + 1), mode, object, size: Number(size) || 0 };
    });
  }

  /**
   * Blobs of this repository by object id, byte for byte (`cat-file --batch`: no filter,
   * no textconv, no path, so nothing in a work tree is read); an id that names no blob
   * is absent from the answer.
   */
  async readBlobs(objects: readonly string[]): Promise<Map<string, Uint8Array>> {
    const ids = [...new Set(objects)];
    for (const id of ids) {
      if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(id)) {
        throw new EpicflowError('git', `invalid object id: ${JSON.stringify(id)}`);
      }
    }
    const blobs = new Map<string, Uint8Array>();
    if (ids.length === 0) return blobs;
    const r = await this.git.try(['cat-file', '--batch'], {
      input: `${ids.join('\n')}\n`,
      bytes: true,
    });
    if (r.exitCode !== 0) throw gitError('cannot read blobs', r);
    const out = r.stdoutBytes ?? Buffer.alloc(0);
    // Each answer: "<object> SP <type> SP <size> LF <content> LF", or "<name> SP missing LF".
    for (let at = 0; at < out.length;) {
      const eol = out.indexOf(0x0a, at);
      if (eol < 0) break;
      const [object = '', type = '', size = ''] = out.subarray(at, eol).toString('utf8').split(' ');
      at = eol + 1;
      const length = Number(size);
      if (type === 'missing' || type === 'ambiguous' || !Number.isInteger(length)) continue;
      if (type === 'blob') blobs.set(object, out.subarray(at, at + length));
      at += length + 1;
    }
    return blobs;
  }

  /** True when `ancestor` is `descendant` or one of its ancestors. */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    checkRefName(ancestor);
    checkRefName(descendant);
    const r = await this.git.try(['merge-base', '--is-ancestor', ancestor, descendant]);
    if (r.exitCode === 0) return true;
    if (r.exitCode === 1) return false;
    throw gitError(`cannot compare ${ancestor} with ${descendant}`, r);
  }

  /**
   * A commit of `ofCommit`'s tree with these parents and message, written
   * without any checkout; no ref moves.
   */
  async commitTree(ofCommit: string, parents: readonly string[], message: string): Promise<string> {
    checkRefName(ofCommit);
    for (const p of parents) checkRefName(p);
    const out = await this.git.run(
      `cannot write a commit of ${ofCommit}`,
      ['commit-tree', `${ofCommit}^{tree}`, ...parents.flatMap((p) => ['-p', p]), '-F', '-'],
      { input: message },
    );
    return out.trim();
  }

  /** The text of `path` in `commit`; null when there is no file (or a folder) there. */
  async readBlob(commit: string, path: string): Promise<string | null> {
    checkRefName(commit);
    const spec = `${commit}:${path}`;
    const type = await this.git.try(['cat-file', '-t', spec]);
    if (type.exitCode !== 0 || type.stdout.trim() !== 'blob') return null;
    return this.git.run(`cannot read ${path} in ${commit}`, ['cat-file', 'blob', spec]);
  }

  /** Where `branch` is checked out (a work tree's top level), or null when nowhere. */
  async checkoutOf(branch: string): Promise<string | null> {
    checkRefName(branch);
    const ref = fullBranchRef(branch);
    const here = (await this.listWorktrees()).find((e) => e.branch === ref && !e.prunable);
    return here?.path ?? null;
  }

  /** Runs a read-only git command in the main work tree (for small helpers). */
  async read(what: string, args: readonly string[]): Promise<string> {
    return this.git.run(what, args);
  }
}

/** The identity the person running epicflow configured (see `readConfiguredIdentity`), or the default. */
async function configuredIdentity(dir: string): Promise<GitIdentity> {
  const { name, email } = await readConfiguredIdentity(dir);
  return { name: name || DEFAULT_IDENTITY.name, email: email || DEFAULT_IDENTITY.email };
}

const MODES: Record<string, ChangedPath['mode']> = {
  '100644': 'file',
  '100755': 'executable',
  '120000': 'symlink',
  '160000': 'submodule',
};

const STATUSES: Record<string, ChangedPath['status']> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  T: 'type-changed',
};

interface TreeEntry {
  /** `<mode> <type> <sha>\t<path>`, which `update-index --index-info` reads as it is. */
  readonly record: string;
  readonly path: string;
}

/**
 * Orders paths as git's index does, by their UTF-8 bytes, which is code point
 * order. UTF-16 code units differ only past U+FFFF: a surrogate (U+D800–DFFF)
 * stands for a code point above every unit from U+E000 up.
 */
function compareIndexOrder(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const rank = (u: number): number => (u >= 0xd800 && u <= 0xdfff ? u + 0x2000 : u);
    return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/**
 * Two listings already in index order (a recursive tree walk is), merged into
 * one. Out of order would still be right, only slower for `update-index`.
 */
function mergeInIndexOrder(a: readonly TreeEntry[], b: readonly TreeEntry[]): TreeEntry[] {
  const out: TreeEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as TreeEntry;
    const y = b[j] as TreeEntry;
    if (compareIndexOrder(x.path, y.path) <= 0) {
      out.push(x);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  for (; i < a.length; i++) out.push(a[i] as TreeEntry);
  for (; j < b.length; j++) out.push(b[j] as TreeEntry);
  return out;
}

/**
 * A tree's index is epicflow's: git trusts its flags (`skip-worktree`,
 * `assume-unchanged`) and its stat data, so an index written by code that ran in the
 * tree (as epicflow's own user, locally) could hide a change from a commit or keep a
 * file from being checked out. The guard keeps the identity of the index file as
 * epicflow's last command left it; before the next command, an index that is not that one (or one never
 * seen) is replaced by a fresh one from HEAD, whose entries carry no flag and no stat
 * data (git then reads every file). Shared by every `Worktree` of one tree.
 */
class IndexGuard {
  private digest: string | undefined;

  constructor(readonly file: string) {}

  /**
   * What identifies the file as written: its inode, size and change time (set by the
   * kernel on every write and every `utimes`, so it cannot be put back), to the
   * nanosecond. Reads no content: this runs around every git command.
   */
  private async current(): Promise<string> {
    try {
      const st = await lstat(this.file, { bigint: true });
      if (!st.isFile()) return `other ${st.mode}`;
      return `${st.dev}:${st.ino}:${st.size}:${st.ctimeNs}:${st.mtimeNs}`;
    } catch {
      return 'missing';
    }
  }

  /** Whether the index is the one epicflow's last command left. */
  async trusted(): Promise<boolean> {
    return this.digest !== undefined && (await this.current()) === this.digest;
  }

  /** Before a command: an index epicflow did not leave is put aside for a fresh one. */
  async check(rebuild: () => Promise<void>): Promise<void> {
    if (await this.trusted()) return;
    await rm(this.file, { recursive: true, force: true });
    await rebuild();
  }

  async settle(): Promise<void> {
    this.digest = await this.current();
  }
}

/**
 * A copy of an index that git reads as it would the original: with the original's
 * modification time (floored, never later). Git tells a file changed within the same
 * second as the index was written ("racily clean") by comparing with the index's own
 * time; a copy made now would make such a change look clean, and hide it.
 */
async function copyIndex(from: string, to: string): Promise<boolean> {
  try {
    const st = await stat(from);
    await copyFile(from, to);
    const mtime = new Date(Math.floor(st.mtimeMs));
    await utimes(to, mtime, mtime);
    return true;
  } catch {
    return false;
  }
}

/** One checked-out work tree (a story's, or the epic's integration tree). */
export class Worktree {
  readonly path: string;
  /** Its git directory: the repository's own for the main tree, its admin folder for a linked one. */
  private readonly gitDir: string;
  private readonly git: GitRunner;
  /**
   * Uncommitted changes that are not the story's (what setup left: a lockfile `npm
   * install` wrote): path → the blob it held then, or null when it was deleted.
   * Commits leave such a path out while it still holds exactly that.
   */
  private readonly setAside = new Map<string, string | null>();

  /** The tree's path with every symlink resolved, as the processes running in it see it. */
  realPath(): Promise<string> {
    return realpath(this.path);
  }

  constructor(
    location: Required<GitLocation>,
    /** The repository's common git directory (the main tree's own). */
    private readonly commonDir: string,
    identity: GitIdentity | undefined,
    private readonly guard = new GitConfigGuard(),
    private readonly index: IndexGuard = new IndexGuard(join(location.gitDir, 'index')),
  ) {
    this.path = location.workTree;
    this.gitDir = location.gitDir;
    // A fresh index from HEAD: read-tree writes it, without checking itself.
    const bare = new GitRunner(location.workTree, identity, undefined, location);
    const rebuild = async (): Promise<void> => {
      const r = await bare.try(['read-tree', 'HEAD']);
      if (r.exitCode !== 0) throw gitError(`cannot rebuild the index of ${this.path}`, r);
    };
    this.git = new GitRunner(
      location.workTree,
      identity,
      {
        check: async () => {
          await guard.check();
          await index.check(rebuild);
        },
        settle: () => index.settle(),
      },
      location,
    );
  }

  /** The files that configure git for this tree (see `GitConfigGuard`). */
  gitConfigPaths(): GitConfigPath[] {
    return gitConfigPaths(this.path, this.commonDir, this.gitDir);
  }

  /**
   * Before untrusted code runs in this tree: trusts the files that configure git
   * for it as they are. Until `restoreGitConfig`, every git command of this
   * repository checks them first.
   */
  async snapshotGitConfig(): Promise<GitConfigWindow> {
    return this.guard.begin(this.gitConfigPaths());
  }

  /** Puts back, byte for byte, whatever of them changed; returns the labels of what was put back. */
  async restoreGitConfig(snapshot: { readonly files: readonly string[] }): Promise<string[]> {
    if (!(snapshot instanceof GitConfigWindow)) {
      throw new EpicflowError('internal', 'restoreGitConfig: not a snapshot of this repository');
    }
    return this.guard.end(snapshot);
  }

  /**
   * The tree of the files as they are (`add -A`, through links never followed),
   * staged in an index of epicflow's own: a copy of the tree's index when it is the one
   * epicflow's last command left at `base` (only what changed since is read again), else
   * one from `base`'s tree (every file is read).
   */
  private async treeOfFiles(
    base: string,
    fromTreeIndex: boolean,
    /** Given the staged index before it is removed: it may take it (rename it away). */
    keep?: (indexFile: string) => Promise<void>,
    /** Given the staged index before its tree is written: it may change entries. */
    adjust?: (indexFile: string) => Promise<void>,
  ): Promise<string> {
    // Beside the tree's own index (epicflow's folder): a rename can put it in its place.
    const scratch = await mkdtemp(join(this.gitDir, 'epicflow-index-'));
    try {
      const indexFile = join(scratch, 'index');
      const copied =
        fromTreeIndex &&
        (await this.index.trusted()) &&
        (await copyIndex(this.index.file, indexFile));
      if (!copied) {
        await this.git.run(`cannot read ${base} in ${this.path}`, ['read-tree', base], {
          indexFile,
        });
      }
      await this.git.run(`cannot stage changes in ${this.path}`, ['add', '-A'], { indexFile });
      await adjust?.(indexFile);
      const tree = (
        await this.git.run(`cannot write the tree of ${this.path}`, ['write-tree'], { indexFile })
      ).trim();
      await keep?.(indexFile);
      return tree;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  async head(): Promise<string> {
    return (await this.git.run(`cannot read HEAD of ${this.path}`, ['rev-parse', 'HEAD'])).trim();
  }

  /**
   * The uncommitted changes as they are now are not the story's: later commits leave
   * each such path out while it holds what it holds now. Returns those paths, sorted.
   */
  async setAsideChanges(): Promise<string[]> {
    const head = await this.head();
    const found = new Map<string, string | null>();
    await this.treeOfFiles(head, true, undefined, async (indexFile) => {
      for (const [path, blob] of await this.stagedChanges(head, indexFile)) found.set(path, blob);
    });
    for (const [path, blob] of found) this.setAside.set(path, blob);
    return [...found.keys()].sort();
  }

  /** Paths staged in `indexFile` that differ from `head`: path → staged blob, or null when deleted. */
  private async stagedChanges(
    head: string,
    indexFile: string,
  ): Promise<Map<string, string | null>> {
    // `:<mode> <mode> <blob> <blob> <status>` NUL `<path>` NUL, per path; a deletion's new blob is zeros.
    const fields = splitNul(
      await this.git.run(
        `cannot compare the staged files with ${head} in ${this.path}`,
        ['diff-index', '--cached', '--no-renames', '--raw', '-z', head, '--'],
        { indexFile },
      ),
    );
    const staged = new Map<string, string | null>();
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const blob = (fields[i] ?? '').split(' ')[3] ?? '';
      staged.set(fields[i + 1] ?? '', /^0+$/.test(blob) ? null : blob);
    }
    return staged;
  }

  /** In a staged index: the set-aside paths that still hold what was set aside go back to `head`. */
  private async leaveOutSetAside(head: string, indexFile: string): Promise<void> {
    if (this.setAside.size === 0) return;
    const staged = await this.stagedChanges(head, indexFile);
    const out = [...staged].filter(
      ([path, blob]) => this.setAside.has(path) && this.setAside.get(path) === blob,
    );
    if (out.length === 0) return;
    await this.git.run(
      `cannot leave setup's changes out of the commit in ${this.path}`,
      ['reset', '-q', head, '--pathspec-from-file=-', '--pathspec-file-nul'],
      { indexFile, input: out.map(([path]) => path).join(NUL), literalPathspecs: true },
    );
  }

  /**
   * Stages everything (`add -A`) but what was set aside and still holds the same, and
   * commits; null when there is nothing to commit.
   */
  async commitAll(message: string): Promise<string | null> {
    // HEAD read first: the tree's index is then checked, and stands for HEAD.
    const head = await this.head();
    let staged: string | undefined;
    const tree = await this.treeOfFiles(
      head,
      true,
      async (indexFile) => {
        const kept = `${this.index.file}.epicflow-staged`;
        await rename(indexFile, kept);
        staged = kept;
      },
      (indexFile) => this.leaveOutSetAside(head, indexFile),
    );
    try {
      const headTree = (
        await this.git.run(`cannot read the tree of ${head}`, ['rev-parse', `${head}^{tree}`])
      ).trim();
      if (tree === headTree) return null;
      const commit = (
        await this.git.run(
          `cannot commit in ${this.path}`,
          ['commit-tree', tree, '-p', head, '-F', '-'],
          { input: message },
        )
      ).trim();
      // HEAD (and the branch it names) moves only from the commit it was read at.
      await this.git.run(`cannot move HEAD of ${this.path} to ${commit}`, [
        'update-ref',
        '-m',
        'epicflow: commit',
        'HEAD',
        commit,
        head,
      ]);
      // What was staged is the tree's index now: it is the commit, with the files' stat data.
      if (staged !== undefined) {
        await rename(staged, this.index.file);
        staged = undefined;
        await this.index.settle();
      }
      return commit;
    } finally {
      if (staged !== undefined) await rm(staged, { force: true });
    }
  }

  /**
   * Merges the epic head into this (story) branch. Conflicting hunks take the
   * epic side (`-X theirs`): those paths belong to stories already merged. Paths
   * still in conflict (delete/modify, binary) are taken as the epic has them.
   * Uncommitted work is committed first so nothing is lost.
   */
  async catchUp(epicSha: string): Promise<{ merged: boolean; conflictsResolvedForEpic: string[] }> {
    const anc = await this.git.try(['merge-base', '--is-ancestor', epicSha, 'HEAD']);
    if (anc.exitCode === 0) return { merged: false, conflictsResolvedForEpic: [] };
    if (anc.exitCode !== 1) throw gitError(`cannot compare ${this.path} with ${epicSha}`, anc);
    await this.commitAll('Work in progress before catching up with the epic');
    if (this.setAside.size > 0) {
      // What is still uncommitted is what was set aside: the merge could not run over it.
      const paths = [...this.setAside.keys()];
      this.setAside.clear();
      await this.restorePaths('HEAD', paths);
      // git clean reads no pathspec file: the paths go as arguments, a few hundred at a time.
      for (let i = 0; i < paths.length; i += 256) {
        await this.git.run(
          `cannot remove setup's files in ${this.path}`,
          ['clean', '-f', '-x', '-q', '--', ...paths.slice(i, i + 256)],
          { literalPathspecs: true },
        );
      }
    }
    const message = `Catch up with the epic at ${epicSha.slice(0, 12)}`;
    const merge = await this.git.try([
      'merge',
      '--no-ff',
      '--no-edit',
      '-X',
      'theirs',
      '-m',
      message,
      epicSha,
    ]);
    if (merge.exitCode === 0) return { merged: true, conflictsResolvedForEpic: [] };
    const conflicts = await this.settleConflictsAs(epicSha, merge, 'the catch-up merge');
    return { merged: true, conflictsResolvedForEpic: conflicts };
  }

  /**
   * A merge stopped on conflicts `-X` could not settle (a deletion against a change, a
   * binary file): each such path is taken as `side` has it (deleted when it has none),
   * and the merge is committed. Returns those paths.
   */
  private async settleConflictsAs(
    side: string,
    merge: ProcessResult,
    what: string,
  ): Promise<string[]> {
    const conflicts = await this.unmergedPaths();
    if (conflicts.length === 0) {
      await this.git.try(['merge', '--abort']);
      throw gitError(`cannot conclude ${what} in ${this.path}`, merge);
    }
    const present = new Set(await this.existingIn(side, conflicts));
    const take = conflicts.filter((p) => present.has(p));
    const drop = conflicts.filter((p) => !present.has(p));
    if (take.length > 0) {
      await this.git.run(
        `cannot take the ${side.slice(0, 12)} version of conflicting paths in ${this.path}`,
        ['checkout', side, '--pathspec-from-file=-', '--pathspec-file-nul'],
        { input: take.join(NUL), literalPathspecs: true },
      );
    }
    if (drop.length > 0) {
      await this.git.run(
        `cannot remove conflicting paths ${side.slice(0, 12)} deleted in ${this.path}`,
        ['rm', '-q', '-f', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'],
        { input: drop.join(NUL), literalPathspecs: true },
      );
    }
    await this.git.run(`cannot conclude ${what} in ${this.path}`, [
      'commit',
      '--no-verify',
      '--quiet',
      '--no-edit',
    ]);
    return conflicts;
  }

  /**
   * Merges `commit` into HEAD with `--no-ff`, conflicting hunks taking HEAD's side
   * (`-X ours`) and paths still in conflict taken as HEAD has them: the rest of
   * `commit` merges. Returns the merge commit.
   */
  async mergeKeepingOurs(commit: string, message: string): Promise<string> {
    checkRefName(commit);
    const head = await this.head();
    const merge = await this.git.try([
      'merge',
      '--no-ff',
      '--no-edit',
      '-X',
      'ours',
      '-m',
      message,
      commit,
    ]);
    if (merge.exitCode !== 0)
      await this.settleConflictsAs(head, merge, `the merge of ${commit.slice(0, 12)}`);
    return this.head();
  }

  /**
   * Committed changes of `head` (HEAD by default) against its merge base with `baseRef`
   * (renames split in two): what merging `head` would bring, read from commits, never
   * from the working tree.
   */
  async changedPaths(baseRef: string, head = 'HEAD'): Promise<ChangedPath[]> {
    checkRefName(baseRef);
    checkRefName(head);
    const out = await this.git.run(`cannot diff ${head} against ${baseRef} in ${this.path}`, [
      'diff',
      '--raw',
      '-z',
      '--no-renames',
      '--no-abbrev',
      ...DIFF_AS_STORED,
      `${baseRef}...${head}`,
      '--',
    ]);
    // Raw format: ":<old mode> <new mode> <old sha> <new sha> <status>" NUL "<path>" NUL.
    const fields = out.split(NUL);
    const changes: ChangedPath[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const meta = fields[i] as string;
      const path = fields[i + 1] as string;
      if (!meta.startsWith(':')) continue;
      const [oldMode = '', newMode = '', , newSha = '', letter = ''] = meta.slice(1).split(' ');
      const status = STATUSES[letter.charAt(0)] ?? 'modified';
      const mode = MODES[status === 'deleted' ? oldMode : newMode] ?? 'file';
      const change: ChangedPath = { path, status, mode };
      if (mode === 'symlink' && status !== 'deleted') {
        change.symlinkTarget = await this.git.run(`cannot read symlink ${path}`, [
          'cat-file',
          'blob',
          newSha,
        ]);
      }
      changes.push(change);
    }
    return changes;
  }

  /**
   * Puts paths (files or directory prefixes) back as they are in `fromRef`:
   * present there → restored, absent there → deleted; tracked files elsewhere
   * (and their uncommitted changes) are left alone. Committing is the caller's job.
   *
   * Linear in the size of the repository, whatever the number of paths: the
   * target tree is computed from two listings and put in place by one two-tree
   * `read-tree` (git, never fs, writes and deletes: it refuses to follow a
   * symlinked directory out of the tree). Pathspecs would be matched path by
   * pathspec, hours for tens of thousands of paths.
   */
  async restorePaths(fromRef: string, paths: readonly string[]): Promise<void> {
    checkRefName(fromRef);
    if (paths.length === 0) return;
    for (const p of paths) {
      if (p === '' || isAbsolute(p) || p.split('/').includes('..')) {
        throw new EpicflowError('git', `refusing to restore an unsafe path: ${JSON.stringify(p)}`);
      }
    }
    const wanted = new Set(paths);
    const under = (file: string): boolean => {
      for (let at = file.length; at > 0; at = file.lastIndexOf('/', at - 1)) {
        if (wanted.has(file.slice(0, at))) return true;
      }
      return false;
    };
    const current = (
      await this.git.run(`cannot read the index of ${this.path}`, ['write-tree'])
    ).trim();
    const restored = (await this.treeEntries(fromRef)).filter((e) => under(e.path));
    const kept = (await this.treeEntries(current)).filter((e) => !under(e.path));
    // Both listings are in the index's order: merged, each entry goes in at the end, no shuffling.
    const target = mergeInIndexOrder(kept, restored);
    const scratch = await mkdtemp(join(tmpdir(), 'epicflow-restore-'));
    let tree: string;
    try {
      const indexFile = join(scratch, 'index');
      await this.git.run(
        `cannot build the restored tree in ${this.path}`,
        // ls-tree's own records are what --index-info reads; --replace: a restored file wins over a folder.
        ['update-index', '--add', '--replace', '-z', '--index-info'],
        { input: target.map((e) => `${e.record}${NUL}`).join(''), indexFile },
      );
      tree = (
        await this.git.run(`cannot write the restored tree in ${this.path}`, ['write-tree'], {
          indexFile,
        })
      ).trim();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    // Two-tree merge from the index as it is: only paths that differ are written or deleted.
    await this.git.run(`cannot restore paths from ${fromRef} in ${this.path}`, [
      'read-tree',
      '--reset',
      '-u',
      current,
      tree,
    ]);
    if (restored.length > 0) {
      // A restored file the index already had as wanted may still be edited on disk.
      await this.git.run(
        `cannot restore paths from ${fromRef} in ${this.path}`,
        ['checkout-index', '-f', '-z', '--stdin'],
        { input: restored.map((e) => `${e.path}${NUL}`).join('') },
      );
    }
  }

  /** Every file of a tree-ish as `ls-tree -r` writes it (in the index's order): the record and its path. */
  private async treeEntries(ref: string): Promise<TreeEntry[]> {
    const out = await this.git.run(`cannot list the files of ${ref}`, [
      'ls-tree',
      '-r',
      '-z',
      '--full-tree',
      ref,
    ]);
    return splitNul(out).map((record) => {
      return { record, path: record.slice(record.indexOf('\t') + 1) };
    });
  }

  /**
   * Merges `branch` into HEAD with a merge commit. On a conflict the merge is
   * aborted (the tree stays clean) and the conflicting paths are returned. A
   * branch already contained in HEAD merges to HEAD itself.
   */
  async mergeNoFf(
    branch: string,
    message: string,
  ): Promise<{ ok: true; sha: string } | { ok: false; conflicts: string[] }> {
    checkRefName(branch);
    const anc = await this.git.try(['merge-base', '--is-ancestor', branch, 'HEAD']);
    if (anc.exitCode === 0) return { ok: true, sha: await this.head() };
    const merge = await this.git.try(['merge', '--no-ff', '--no-edit', '-m', message, branch]);
    if (merge.exitCode === 0) return { ok: true, sha: await this.head() };
    const conflicts = await this.unmergedPaths();
    await this.git.try(['merge', '--abort']);
    if (conflicts.length === 0) throw gitError(`cannot merge ${branch} in ${this.path}`, merge);
    return { ok: false, conflicts };
  }

  /**
   * Starts merging `commit` into HEAD without committing (`--no-ff --no-commit`):
   * a clean merge leaves the merged tree, a conflict leaves git's markers in the
   * conflicting files. Returns the conflicting paths. Conclude with
   * `snapshotCommit`, or put the tree back with `detachAt`.
   */
  async mergeNoCommit(commit: string): Promise<string[]> {
    checkRefName(commit);
    const merge = await this.git.try(['merge', '--no-ff', '--no-commit', '--no-edit', commit]);
    const conflicts = await this.unmergedPaths();
    if (merge.exitCode !== 0 && conflicts.length === 0) {
      await this.git.try(['merge', '--abort']);
      throw gitError(`cannot merge ${commit} in ${this.path}`, merge);
    }
    return conflicts;
  }

  /**
   * Stages the whole tree as it is (`add -A`, which also settles a merge's
   * conflicting entries as their files now read) and writes a commit of it with
   * `parents`. HEAD does not move; whatever HEAD or the index said before (an
   * agent's own commits, a merge in progress) has no say in the commit.
   */
  async snapshotCommit(parents: readonly string[], message: string): Promise<string> {
    for (const p of parents) checkRefName(p);
    const tree = await this.treeOfFiles(parents[0] ?? 'HEAD', false);
    const out = await this.git.run(
      `cannot commit in ${this.path}`,
      ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'],
      { input: message },
    );
    return out.trim();
  }

  /**
   * A detached HEAD at `sha`, index and tree as there, untracked files removed
   * (ignored ones kept: installed dependencies); a merge in progress is dropped.
   * No branch moves, even when something checked one out here meanwhile.
   */
  async detachAt(sha: string): Promise<void> {
    checkRefName(sha);
    await this.git.run(`cannot put ${this.path} at ${sha}`, [
      'checkout',
      '--quiet',
      '--force',
      '--detach',
      sha,
    ]);
    await this.git.run(`cannot clean ${this.path}`, ['clean', '-f', '-f', '-d', '-q']);
  }

  /** Moves this tree's branch (and its checkout) forward to `sha`; false when that is no fast-forward. */
  async fastForward(sha: string): Promise<boolean> {
    checkRefName(sha);
    const r = await this.git.try(['merge', '--ff-only', '--quiet', sha]);
    return r.exitCode === 0;
  }

  /** Resets HEAD, index and tree to `sha`, and removes untracked (not ignored) files. */
  async resetHard(sha: string): Promise<void> {
    checkRefName(sha);
    await this.git.run(`cannot reset ${this.path} to ${sha}`, ['reset', '--hard', '--quiet', sha]);
    await this.git.run(`cannot clean ${this.path}`, ['clean', '-f', '-f', '-d', '-q']);
  }

  /**
   * Paths with uncommitted changes or untracked (not ignored) files, both sides of a
   * rename; a path set aside that still holds what it held then is not one.
   */
  async dirtyPaths(): Promise<string[]> {
    const out = await this.git.run(`cannot read the status of ${this.path}`, [
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
    ]);
    const dirty = parseStatusPaths(out);
    if (!dirty.some((p) => this.setAside.has(p))) return dirty;
    const head = await this.head();
    const same = new Set<string>();
    await this.treeOfFiles(head, true, undefined, async (indexFile) => {
      for (const [path, blob] of await this.stagedChanges(head, indexFile)) {
        if (this.setAside.has(path) && this.setAside.get(path) === blob) same.add(path);
      }
    });
    return dirty.filter((p) => !same.has(p));
  }

  /**
   * Every path that differs from `base` in this tree: in commits made on top of
   * it (or on another HEAD altogether), staged, unstaged, untracked, and
   * ignored files too. What a read-only run left behind, sorted.
   */
  async changedFrom(base: string): Promise<string[]> {
    checkRefName(base);
    const committed = await this.git.run(`cannot diff ${this.path} against ${base}`, [
      'diff',
      '--name-only',
      '-z',
      '--no-renames',
      ...DIFF_AS_STORED,
      base,
      'HEAD',
      '--',
    ]);
    const status = await this.git.run(`cannot read the status of ${this.path}`, [
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--ignored=traditional',
    ]);
    return [...new Set([...splitNul(committed), ...parseStatusPaths(status)])].sort();
  }

  /**
   * A detached HEAD at `sha` with index and tree as there, untracked and ignored
   * files removed: the tree as checked out. No branch moves (one the run
   * checked out here stays where it was).
   */
  async discardTo(sha: string): Promise<void> {
    checkRefName(sha);
    await this.git.run(`cannot put ${this.path} back at ${sha}`, [
      'checkout',
      '--quiet',
      '--force',
      '--detach',
      sha,
    ]);
    await this.git.run(`cannot clean ${this.path}`, ['clean', '-f', '-f', '-d', '-x', '-q']);
  }

  async isClean(): Promise<boolean> {
    const out = await this.git.run(`cannot read the status of ${this.path}`, [
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
    ]);
    return out === '';
  }

  private async unmergedPaths(): Promise<string[]> {
    const out = await this.git.run(`cannot list conflicts in ${this.path}`, [
      'diff',
      '--name-only',
      '-z',
      '--diff-filter=U',
      ...DIFF_AS_STORED,
    ]);
    return [...new Set(splitNul(out))];
  }

  /** Which of `paths` (files or prefixes) have at least one file in `ref`. */
  private async existingIn(ref: string, paths: readonly string[]): Promise<string[]> {
    const out = await this.git.run(`cannot list the files of ${ref}`, [
      'ls-tree',
      '-r',
      '-z',
      '--name-only',
      '--full-tree',
      ref,
    ]);
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
}
