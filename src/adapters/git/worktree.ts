/**
 * One checked-out work tree (a story's, or the epic's integration tree): commits, the
 * catch-up and integration merges, the diff a perimeter is enforced on, and restores
 * (the diff and restores in perimeter-diff.ts, a merge's conflicts in merge-conflicts.ts).
 * Every command goes through `GitRunner`; every failure is an `EpicflowError('git', …)`.
 */
import { mkdtemp, realpath, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import {
  GitConfigGuard,
  GitConfigWindow,
  gitConfigPaths,
  type GitConfigPath,
} from './config-guard.js';
import { GitRunner, gitError, type GitIdentity, type TreeLocation } from './run-git.js';
import {
  type ChangedPath,
  NUL,
  DIFF_AS_STORED,
  splitNul,
  checkRefName,
  parseStatusPaths,
} from './listings.js';
import { gitlinksIn, stagedChanges } from './index-entries.js';
import { IndexGuard, copyIndex } from './index-guard.js';
import { changedPaths, restorePaths } from './perimeter-diff.js';
import { settleConflictsAs, unmergedPaths } from './merge-conflicts.js';

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
    location: TreeLocation,
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
      // A gitlink already in the index (the base's submodule, or one a story committed)
      // is left as it is: `add` would enter the repository at its path to see whether it
      // changed, and that repository's config (a filter the agent wrote) would run as
      // epicflow. A new one is staged without entering it, and the perimeter refuses it.
      const gitlinks = await gitlinksIn(this.git, this.path, indexFile);
      await this.git.run(
        `cannot stage changes in ${this.path}`,
        ['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'],
        {
          indexFile,
          input: [':(top)', ...gitlinks.map((p) => `:(top,exclude,literal)${p}`)].join(NUL),
        },
      );
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
      for (const [path, blob] of await stagedChanges(this.git, this.path, head, indexFile))
        found.set(path, blob);
    });
    for (const [path, blob] of found) this.setAside.set(path, blob);
    return [...found.keys()].sort();
  }

  /** In a staged index: the set-aside paths that still hold what was set aside go back to `head`. */
  private async leaveOutSetAside(head: string, indexFile: string): Promise<void> {
    if (this.setAside.size === 0) return;
    const staged = await stagedChanges(this.git, this.path, head, indexFile);
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
    const conflicts = await settleConflictsAs(
      this.git,
      this.path,
      epicSha,
      merge,
      'the catch-up merge',
    );
    return { merged: true, conflictsResolvedForEpic: conflicts };
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
      await settleConflictsAs(
        this.git,
        this.path,
        head,
        merge,
        `the merge of ${commit.slice(0, 12)}`,
      );
    return this.head();
  }

  /**
   * Committed changes of `head` (HEAD by default) against its merge base with `baseRef`
   * (renames split in two): what merging `head` would bring, read from commits, never
   * from the working tree.
   */
  changedPaths(baseRef: string, head = 'HEAD'): Promise<ChangedPath[]> {
    return changedPaths(this.git, this.path, baseRef, head);
  }

  /**
   * Puts paths (files or directory prefixes) back as they are in `fromRef` (see
   * perimeter-diff.ts): present there → restored, absent there → deleted; committing is
   * the caller's job.
   */
  restorePaths(fromRef: string, paths: readonly string[]): Promise<void> {
    return restorePaths(this.git, this.path, fromRef, paths);
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
    const conflicts = await unmergedPaths(this.git, this.path);
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
    const conflicts = await unmergedPaths(this.git, this.path);
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
      // Never enters a repository nested in the tree (its config would run as epicflow).
      '--ignore-submodules=all',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
    ]);
    const dirty = parseStatusPaths(out);
    if (!dirty.some((p) => this.setAside.has(p))) return dirty;
    const head = await this.head();
    const same = new Set<string>();
    await this.treeOfFiles(head, true, undefined, async (indexFile) => {
      for (const [path, blob] of await stagedChanges(this.git, this.path, head, indexFile)) {
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
      // Never enters a repository nested in the tree (its config would run as epicflow).
      '--ignore-submodules=all',
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
      // Never enters a repository nested in the tree (its config would run as epicflow).
      '--ignore-submodules=all',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
    ]);
    return out === '';
  }
}
