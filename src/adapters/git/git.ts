/**
 * Git for the engine: branches and refs of the user's repository (never its checkout)
 * and its worktrees (`Worktree`, in worktree.ts). Every command goes through
 * `GitRunner`, which disables hooks; every failure is an `EpicflowError('git', …)`.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import type { TreeFile } from '../../core/prompt/starting-code.js';
import { GitConfigGuard } from './config-guard.js';
import {
  GitRunner,
  gitError,
  readConfiguredIdentity,
  type GitIdentity,
  type TreeLocation,
} from './run-git.js';
import {
  PATCH_AS_TEXT,
  splitNul,
  canonical,
  checkRefName,
  fullBranchRef,
  type WorktreeEntry,
  parseWorktreeList,
  parseStatusPaths,
  LIST_FILES,
} from './listings.js';
import { IndexGuard } from './index-guard.js';
import {
  commitTree,
  isAncestor,
  readBlobs,
  readObjectFormat,
  treeFiles,
  type ObjectFormat,
} from './objects.js';
import { Worktree } from './worktree.js';
import { KnownTrees } from './known-trees.js';
import { checkOutAs, type TreeWriter } from './tree-writer.js';
import {
  adminFolders,
  branchAbsentFromFiles,
  branchFromFiles,
  headFromFiles,
  listTrees,
} from './admin-folders.js';

export { Worktree } from './worktree.js';

/** The identity used when neither the caller nor the repository configures one. */
const DEFAULT_IDENTITY: GitIdentity = { name: 'epicflow', email: 'epicflow@localhost' };

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
  /** Linked trees are handed to other users between commands (`handsTreesOver`). */
  private handedOver = false;
  /** Stale registrations were pruned once (before this instance's first tree). */
  private pruned = false;
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

  /**
   * The linked trees of this repository are handed to other users and taken back
   * between epicflow's commands (`--agent-user`, the story jobs): git then compares their
   * files without their change times, which every taking back moves (see
   * `GitLocation.handedOver`). The main tree, the user's own, is never handed over.
   */
  handsTreesOver(): void {
    this.handedOver = true;
  }

  /** Opens the repository containing `dir`; `EpicflowError('git')` when there is none. */
  static async open(dir: string, identity?: GitIdentity): Promise<Git> {
    const notRepo = (): EpicflowError => new EpicflowError('git', `not a git repository: ${dir}`);
    if (!existsSync(dir)) throw notRepo();
    const probe = new GitRunner(dir, undefined);
    // One line each: whether `dir` is in a work tree, then the common git directory.
    const probed = await probe.try([
      'rev-parse',
      '--is-inside-work-tree',
      '--path-format=absolute',
      '--git-common-dir',
    ]);
    const [inside, commonDir = ''] = probed.stdout.split('\n');
    if (probed.exitCode !== 0 || inside !== 'true' || commonDir === '') throw notRepo();
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

  /**
   * The commit a ref or sha names; null when missing. `HEAD` and a branch are read from
   * their files where those tell (`headFromFiles`): a job reads them again and again.
   */
  async revParse(ref: string): Promise<string | null> {
    checkRefName(ref);
    const known =
      ref === 'HEAD' ? headFromFiles(this.gitDir, this.gitDir) : branchFromFiles(this.gitDir, ref);
    if (known !== null) return known;
    if (branchAbsentFromFiles(this.gitDir, ref)) return null;
    const r = await this.git.try(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return r.exitCode === 0 ? r.stdout.trim() : null;
  }

  /**
   * The commit each ref or sha names (null when missing), in one git process: `revParse`
   * for several names at once.
   */
  private async commitsOf(refs: readonly string[]): Promise<(string | null)[]> {
    for (const r of refs) checkRefName(r);
    const out = await this.git.run(
      'cannot resolve ' + refs.join(', '),
      ['cat-file', '--batch-check'],
      {
        input: refs.map((r) => `${r}^{commit}\n`).join(''),
      },
    );
    const lines = out.split('\n');
    return refs.map((_, i) => {
      const m = /^([0-9a-f]{40,64}) commit \d+$/.exec(lines[i] ?? '');
      return m === null ? null : (m[1] as string);
    });
  }

  /** The branch checked out in the main work tree; null when HEAD is detached. */
  async currentBranch(): Promise<string | null> {
    const r = await this.git.try(['symbolic-ref', '--quiet', '--short', 'HEAD']);
    return r.exitCode === 0 ? r.stdout.trim() : null;
  }

  /**
   * Uncommitted and untracked paths of a work tree (default: the main one);
   * with `untracked: false`, only changes to tracked files. For your own checkouts (the
   * repository's, the branch landed into); a tree an agent wrote is read by epicflow
   * itself (`Worktree.dirtyPaths`), never by `git status`.
   */
  async dirtyPaths(
    dir?: string,
    options: { readonly untracked?: boolean } = {},
  ): Promise<string[]> {
    const runner = dir === undefined ? this.git : this.runnerOf(dir);
    const out = await runner.run(`cannot read the status of ${dir ?? this.root}`, [
      'status',
      // Never enters a repository nested in the tree (its config would run as epicflow).
      '--ignore-submodules=all',
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
  async addWorktree(path: string, branch: string, writer?: TreeWriter): Promise<void> {
    return this.oneAdminAtATime(() => this.addWorktreeNow(path, branch, writer));
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

  private async addWorktreeNow(path: string, branch: string, writer?: TreeWriter): Promise<void> {
    checkRefName(branch);
    // Registrations of trees gone since an earlier run; this run's own removals prune.
    if (!this.pruned) {
      await this.git.run('cannot prune stale worktrees', ['worktree', 'prune']);
      this.pruned = true;
    }
    const target = canonical(path);
    const ref = fullBranchRef(branch);
    const loose = branchFromFiles(this.gitDir, ref);
    // A commit this process wrote needs no asking, unless a branch bears its name.
    const [asBranch, asCommit] =
      loose !== null
        ? [loose, null]
        : this.known.treeOf(branch) !== undefined && branchAbsentFromFiles(this.gitDir, ref)
          ? [null, branch]
          : await this.commitsOf([ref, branch]);
    const isBranch = asBranch !== null;
    const sha = isBranch ? null : asCommit;
    if (!isBranch && sha === null) {
      throw new EpicflowError(
        'git',
        `cannot add a worktree at ${path}: no branch or commit ${branch}`,
      );
    }
    const entries = this.listWorktrees();
    if (entries.some((e) => canonical(e.path) === target)) await this.removeWorktreeNow(path);
    // The branch's tree under another path (the repository moved, or the worktree root
    // changed since the story ran): that tree goes, the story's is made here, as for any
    // resumed story (a tree is rebuilt from its commit, never reused as found).
    const elsewhere = isBranch
      ? entries.find((e) => e.branch === ref && canonical(e.path) !== target)
      : undefined;
    if (elsewhere !== undefined) {
      if (canonical(elsewhere.path) === canonical(this.root)) {
        throw new EpicflowError(
          'git',
          `cannot add a worktree for ${branch} at ${path}: it is checked out in your repository at ${this.root}`,
          { details: ['switch that checkout to another branch, then run again'] },
        );
      }
      await this.removeWorktreeNow(elsewhere.path);
    }
    // A folder left behind (a tree whose registration was pruned): its content is no one's.
    await rm(target, { recursive: true, force: true });
    await mkdir(dirname(target), { recursive: true });
    await this.git.run(`cannot add a worktree for ${branch} at ${path}`, [
      'worktree',
      'add',
      ...(writer === undefined ? [] : ['--no-checkout']),
      ...(isBranch ? ['--', target, branch] : ['--detach', '--', target, sha as string]),
    ]);
    this.admins.delete(target);
    if (writer !== undefined) {
      const admin = this.locationOf(target).gitDir;
      await checkOutAs({ target, admin, gitDir: this.gitDir, guard: this.guard }, writer);
    }
    // The index `worktree add` just wrote is epicflow's.
    const fresh = new IndexGuard(join(this.locationOf(target).gitDir, 'index'));
    fresh.settle();
    this.indexes.set(this.locationOf(target).gitDir, fresh);
  }

  /**
   * Removes a worktree (even with uncommitted changes); a missing one is fine. Its folder
   * goes first (never following a link), then its admin folder: no git command reads a tree
   * code may have written into (its `.git` file, its status) to remove it.
   */
  async removeWorktree(path: string): Promise<void> {
    return this.oneAdminAtATime(() => this.removeWorktreeNow(path));
  }

  private async removeWorktreeNow(path: string): Promise<void> {
    const target = canonical(path);
    const entries = this.listWorktrees();
    const here = entries.find((e) => canonical(e.path) === target);
    if (!here) return;
    if (target === canonical(this.root)) {
      throw new EpicflowError('git', `refusing to remove the repository's own tree: ${path}`);
    }
    const admin = this.locationOf(target).gitDir;
    await rm(target, { recursive: true, force: true });
    // Its registration goes with it, as `git worktree prune` drops it once the tree is gone:
    // the admin folder that names it, found from the repository's side; no git started.
    await rm(admin, { recursive: true, force: true });
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
      () => (this.format ??= readObjectFormat(this.git, this.root)),
      this.known,
    );
  }

  /** The repository's object format, read once for all its trees. */
  private format: Promise<ObjectFormat> | undefined;

  /** What this process knows of the repository's objects, shared by its trees. */
  private readonly known = new KnownTrees();

  /**
   * Where a tree's git state is, found from the repository's side (the admin
   * folders' `gitdir` files), never from the tree's own `.git`, which the code
   * that ran in the tree could have replaced.
   */
  private locationOf(path: string): TreeLocation {
    const workTree = canonical(isAbsolute(path) ? path : resolve(this.root, path));
    if (workTree === canonical(this.root)) return { gitDir: this.gitDir, workTree };
    const linked = (gitDir: string): TreeLocation =>
      this.handedOver ? { gitDir, workTree, handedOver: true } : { gitDir, workTree };
    const known = this.admins.get(workTree);
    if (known !== undefined) return linked(known);
    for (const { admin, path: named } of adminFolders(this.gitDir)) {
      if (canonical(named) !== workTree) continue;
      this.admins.set(workTree, admin);
      return linked(admin);
    }
    throw new EpicflowError('git', `${path} is not a worktree of ${this.root}`, {
      details: [`no folder under ${join(this.gitDir, 'worktrees')} names it`],
    });
  }

  private runnerOf(path: string): GitRunner {
    const location = this.locationOf(path);
    return new GitRunner(location.workTree, this.identity, this.guard, location);
  }

  /** The trees as the repository's admin folders name them (`listTrees`): no git started. */
  private listWorktrees(): WorktreeEntry[] {
    return listTrees(this.root, this.gitDir);
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

  /** Whether two commits this process wrote hold the same tree; undefined when not known. */
  sameTree(a: string, b: string): boolean | undefined {
    return this.known.sameTree(a, b);
  }

  /** Every file of a commit, repository-relative, in git's order (what a planner may read). */
  async listFiles(ref: string): Promise<string[]> {
    checkRefName(ref);
    const out = await this.git.run(`cannot list the files of ${ref}`, [...LIST_FILES, ref]);
    return splitNul(out);
  }

  /**
   * Every entry of a commit's tree, recursively, with its mode, object id and size
   * (`ls-tree -r -l`): what a story's starting code is chosen from. Read from git's
   * objects, never from a work tree, so no link in a tree is ever followed.
   */
  async treeFiles(commit: string): Promise<TreeFile[]> {
    return treeFiles(this.git, commit);
  }

  /** Blobs of this repository by object id, byte for byte (see `readBlobs` in objects.ts). */
  async readBlobs(objects: readonly string[]): Promise<Map<string, Uint8Array>> {
    return readBlobs(this.git, objects);
  }

  /** True when `ancestor` is `descendant` or one of its ancestors. */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return isAncestor(this.git, ancestor, descendant);
  }

  /**
   * A commit of `ofCommit`'s tree with these parents and message, written
   * without any checkout; no ref moves.
   */
  async commitTree(ofCommit: string, parents: readonly string[], message: string): Promise<string> {
    checkRefName(ofCommit);
    return commitTree(this.git, `${ofCommit}^{tree}`, parents, message);
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
    const here = this.listWorktrees().find((e) => e.branch === ref && !e.prunable);
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
