/**
 * One checked-out work tree (a story's, or the epic's integration tree): commits, the
 * catch-up and integration merges, the diff a perimeter is enforced on, and restores
 * (perimeter-diff.ts). Its files are read (tree-of-files.ts), merged (merge-objects.ts) and
 * written back (write-back.ts) by epicflow and object commands, never by git over the tree.
 * Every command goes through `GitRunner`; every failure is an `EpicflowError('git', …)`.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import {
  GitConfigGuard,
  GitConfigWindow,
  gitConfigPaths,
  type GitConfigPath,
} from './config-guard.js';
import { GitRunner, gitError, type GitIdentity, type TreeLocation } from './run-git.js';
import { type ChangedPath, DIFF_AS_STORED, splitNul, checkRefName } from './listings.js';
import type { LeftOut } from '../../engine/ports.js';
import { IndexGuard } from './index-guard.js';
import { dropMergeState, headFromFiles, noteSetAside } from './admin-folders.js';
import { commitTree, readObjectFormat, type ObjectFormat } from './objects.js';
import {
  differences,
  ignoredPaths,
  readFiles,
  treeEntries,
  writeTree,
  type FilesRead,
  type FileEntry,
  type ReadCache,
  utf8Path,
} from './tree-of-files.js';
import { changedPaths, restoredTree } from './perimeter-diff.js';
import { mergeObjects, type ObjectMerge } from './merge-objects.js';
import { KnownTrees } from './known-trees.js';
import { inside, nearTo, writeBack } from './write-back.js';

/** One checked-out work tree (a story's, or the epic's integration tree). */
export class Worktree {
  readonly path: string;
  /** Its git directory: the repository's own for the main tree, its admin folder for a linked one. */
  private readonly gitDir: string;
  private readonly git: GitRunner;
  /**
   * Uncommitted changes that are not the story's (what setup left: a lockfile `npm install`
   * wrote): path (its bytes, see tree-of-files.ts) → the blob it held then, or null when it
   * was deleted. Commits leave such a path out while it still holds exactly that.
   */
  private readonly setAside = new Map<string, string | null>();
  /** The files read at the last commit or check, not read again while unchanged. */
  private readonly readCache: ReadCache = new Map();

  /** The tree's path with every symlink resolved, as the processes running in it see it. */
  realPath(): Promise<string> {
    return realpath(this.path);
  }

  constructor(
    location: TreeLocation,
    /** The repository's common git directory (the main tree's own). */
    private readonly commonDir: string,
    private readonly identity: GitIdentity | undefined,
    private readonly guard = new GitConfigGuard(),
    private readonly index: IndexGuard = new IndexGuard(join(location.gitDir, 'index')),
    /** The repository's object format, where the repository already knows it. */
    private readonly repositoryFormat?: () => Promise<ObjectFormat>,
    private readonly known = new KnownTrees(),
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
   * Before untrusted code runs in this tree: trusts the files that configure git for it as
   * they are. Until `restoreGitConfig`, every git command of this repository checks them first.
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
   * What the tree holds as files, read by epicflow itself (see tree-of-files.ts), against
   * `base`'s entries; ignored files left out unless `ignored` is false.
   */
  private async filesAt(
    base: string,
    options: {
      readonly ignored?: boolean;
      readonly hashUntracked?: (path: string) => boolean;
      readonly only?: (path: string) => boolean;
    } = {},
  ): Promise<{ tracked: ReadonlyMap<string, FileEntry>; files: FilesRead }> {
    const tracked = await this.entriesOf(base);
    const files = await readFiles({
      root: this.path,
      tracked,
      objectFormat: await this.objectFormat(),
      ignored:
        options.ignored === false ? null : (paths) => ignoredPaths(this.git, this.path, paths),
      ...(options.hashUntracked === undefined ? {} : { hashUntracked: options.hashUntracked }),
      ...(options.only === undefined ? {} : { only: options.only }),
      cache: this.readCache,
    });
    return { tracked, files };
  }

  /** The entries of a commit, listed once by its id: a commit's tree never changes. */
  private entriesOf(base: string): Promise<ReadonlyMap<string, FileEntry>> {
    return this.known.entries(base, () => treeEntries(this.git, base));
  }

  private format: Promise<ObjectFormat> | undefined;

  /** The repository's object format: how a blob's id is computed. */
  private objectFormat(): Promise<ObjectFormat> {
    this.format ??= this.repositoryFormat?.() ?? readObjectFormat(this.git, this.path);
    return this.format;
  }

  /**
   * Writes the files' blobs and tree by object commands alone, from a folder of epicflow's
   * own with no work tree named: no git command reads the tree. Returns the tree.
   */
  private writeFilesTree(files: FilesRead): Promise<string> {
    return this.withObjects((objects, scratch) =>
      writeTree(objects, this.path, files, join(scratch, 'index')),
    );
  }

  /** Object commands run from a folder of epicflow's own, beside the tree's index; no work tree. */
  private async withObjects<T>(work: (git: GitRunner, scratch: string) => Promise<T>): Promise<T> {
    const scratch = await mkdtemp(join(this.gitDir, 'epicflow-index-'));
    try {
      return await work(
        new GitRunner(scratch, this.identity, this.guard, { gitDir: this.gitDir }),
        scratch,
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Makes the tree hold exactly `target`'s files (a commit or tree; see write-back.ts), no git
   * command over it, and the index `target`'s entries (read from objects). Ignored files stay
   * unless `ignored` is false. HEAD is the caller's.
   */
  private async putBack(
    target: string,
    options: {
      readonly ignored?: boolean;
      /** Only these paths (bytes) and what is below them; the others read or written as they are. */
      readonly paths?: ReadonlySet<string>;
      readonly alsoRemove?: readonly string[];
    } = {},
  ): Promise<void> {
    const { paths, alsoRemove = [] } = options;
    const { tracked, files } = await this.filesAt(target, {
      ...(options.ignored === false ? { ignored: false } : {}),
      ...(paths === undefined ? {} : { only: nearTo(paths) }),
      hashUntracked: () => false,
    });
    await writeBack(this.git, {
      root: this.path,
      now: files,
      target: tracked,
      alsoRemove,
      ...(paths === undefined ? {} : { within: (p: string) => inside(paths, p) }),
    });
    await this.git.run(`cannot read ${target} into the index of ${this.path}`, [
      'read-tree',
      target,
    ]);
  }

  /** Moves HEAD (the branch it names, unless `detach`) from `from` to `to`, by object commands. */
  private async moveHead(to: string, from: string | null, detach = false): Promise<void> {
    const args = [...(detach ? ['--no-deref'] : []), 'HEAD', to, ...(from === null ? [] : [from])];
    await this.git.run(`cannot move HEAD of ${this.path} to ${to}`, ['update-ref', ...args]);
  }

  private mergeFrom(ours: string, theirs: string, favor: 'ours' | 'theirs' | null) {
    return this.withObjects((git, scratch) => mergeObjects(git, scratch, ours, theirs, favor));
  }

  /**
   * `theirs` merged into HEAD from objects (merge-objects.ts), conflicts settled for
   * `favor`'s side; the merge commit written back and HEAD moved to it.
   */
  private async mergeBack(
    theirs: string,
    favor: 'ours' | 'theirs',
    message: string,
    alsoRemove: readonly string[] = [],
  ): Promise<{ commit: string; merge: ObjectMerge }> {
    const head = await this.head();
    const merge = await this.mergeFrom(head, theirs, favor);
    const commit = await commitTree(this.git, merge.tree, [head, theirs], message);
    this.known.wrote(commit, merge.tree);
    await this.putBack(commit, { alsoRemove });
    await this.moveHead(commit, head);
    return { commit, merge };
  }

  /** In `entries`: each set-aside path that still holds what was set aside goes back to `tracked`'s. */
  private keepSetAside(
    tracked: ReadonlyMap<string, FileEntry>,
    entries: Map<string, FileEntry>,
  ): void {
    for (const [path, blob] of this.setAside) {
      if ((entries.get(path)?.object ?? null) !== blob) continue;
      const was = tracked.get(path);
      if (was === undefined) entries.delete(path);
      else entries.set(path, was);
    }
  }

  async head(): Promise<string> {
    return (
      headFromFiles(this.gitDir, this.commonDir) ??
      (await this.git.run(`cannot read HEAD of ${this.path}`, ['rev-parse', 'HEAD'])).trim()
    );
  }

  /**
   * The uncommitted changes as they are now are not the story's: later commits leave each
   * such path out while it holds what it holds now. Returns those paths, sorted.
   */
  async setAsideChanges(): Promise<string[]> {
    const { tracked, files } = await this.filesAt(await this.head());
    const found = differences(tracked, files.entries);
    for (const [path, blob] of found) this.setAside.set(path, blob);
    const made = [...found.keys()].filter((p) => !tracked.has(p));
    await noteSetAside(this.gitDir, this.commonDir, made);
    return [...found.keys()].map(utf8Path).sort();
  }

  /**
   * Commits the files as they are (read by epicflow, see `filesAt`) but what was set aside
   * and still holds the same; null when there is nothing to commit. A repository nested
   * in the tree is left out, and `leftOut` told its folders.
   */
  async commitAll(message: string, leftOut?: LeftOut): Promise<string | null> {
    const head = await this.head();
    const { tracked, files } = await this.filesAt(head);
    this.keepSetAside(tracked, files.entries);
    if (files.nested.length > 0) await leftOut?.(files.nested);
    if (differences(tracked, files.entries).size === 0) return null;
    const tree = await this.writeFilesTree(files);
    const commit = (
      await this.git.run(
        `cannot commit in ${this.path}`,
        ['commit-tree', tree, '-p', head, '-F', '-'],
        { input: message },
      )
    ).trim();
    this.known.wrote(commit, tree, files.entries);
    // HEAD (and the branch it names) moves only from the commit it was read at.
    await this.git.run(`cannot move HEAD of ${this.path} to ${commit}`, [
      'update-ref',
      '-m',
      'epicflow: commit',
      'HEAD',
      commit,
      head,
    ]);
    // The tree's index stands for the commit (read-tree reads objects, not the files).
    await this.git.run(`cannot read ${commit} into the index of ${this.path}`, [
      'read-tree',
      commit,
    ]);
    return commit;
  }

  /**
   * Merges the epic head into this (story) branch. Conflicting hunks take the
   * epic side (`-X theirs`): those paths belong to stories already merged. Paths
   * still in conflict (delete/modify, binary) are taken as the epic has them.
   * Uncommitted work is committed first so nothing is lost.
   */
  async catchUp(epicSha: string): Promise<{ merged: boolean; conflictsResolvedForEpic: string[] }> {
    // A branch made at the epic head (HEAD read from its files, as git reads them) holds it.
    if ((await this.head()) === epicSha) return { merged: false, conflictsResolvedForEpic: [] };
    const anc = await this.git.try(['merge-base', '--is-ancestor', epicSha, 'HEAD']);
    if (anc.exitCode === 0) return { merged: false, conflictsResolvedForEpic: [] };
    if (anc.exitCode !== 1) throw gitError(`cannot compare ${this.path} with ${epicSha}`, anc);
    await this.commitAll('Work in progress before catching up with the epic');
    // What is still uncommitted is what was set aside: the merge's files replace it.
    const setAside = [...this.setAside.keys()];
    this.setAside.clear();
    const message = `Catch up with the epic at ${epicSha.slice(0, 12)}`;
    const { merge } = await this.mergeBack(epicSha, 'theirs', message, setAside);
    return { merged: true, conflictsResolvedForEpic: merge.conflicts };
  }

  /**
   * Merges `commit` into HEAD with `--no-ff`, conflicting hunks taking HEAD's side
   * (`-X ours`) and paths still in conflict taken as HEAD has them: the rest of
   * `commit` merges. Returns the merge commit.
   */
  async mergeKeepingOurs(commit: string, message: string): Promise<string> {
    checkRefName(commit);
    return (await this.mergeBack(commit, 'ours', message)).commit;
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
  async restorePaths(fromRef: string, paths: readonly string[]): Promise<void> {
    const tree = await restoredTree(this.git, this.path, fromRef, paths);
    if (tree === null) return;
    await this.putBack(tree, {
      paths: new Set(paths.map((p) => Buffer.from(p).toString('latin1'))),
    });
  }

  /**
   * Merges `branch` into HEAD with a merge commit. On a conflict nothing is
   * written and the conflicting paths are returned. A branch already contained in
   * HEAD merges to HEAD itself.
   */
  async mergeNoFf(
    branch: string,
    message: string,
  ): Promise<{ ok: true; sha: string } | { ok: false; conflicts: string[] }> {
    checkRefName(branch);
    const anc = await this.git.try(['merge-base', '--is-ancestor', branch, 'HEAD']);
    if (anc.exitCode === 0) return { ok: true, sha: await this.head() };
    const head = await this.head();
    const merge = await this.mergeFrom(head, branch, null);
    if (merge.conflicts.length > 0) return { ok: false, conflicts: merge.conflicts };
    const sha = await commitTree(this.git, merge.tree, [head, branch], message);
    this.known.wrote(sha, merge.tree);
    await this.putBack(sha);
    await this.moveHead(sha, head);
    return { ok: true, sha };
  }

  /**
   * Writes the merge of `commit` into HEAD to the tree, HEAD unmoved: a clean merge
   * leaves the merged tree, a conflict git's markers in the conflicting files. Returns
   * the conflicting paths. Conclude with `snapshotCommit`, or put the tree back with `detachAt`.
   */
  async mergeNoCommit(commit: string): Promise<string[]> {
    checkRefName(commit);
    // HEAD by name: git's markers say `HEAD`, as a merge in the tree wrote them.
    const merge = await this.mergeFrom('HEAD', commit, null);
    await this.putBack(merge.tree);
    return merge.conflicts;
  }

  /**
   * Writes a commit of the files as they are (read by epicflow, see `filesAt`; a merge's
   * conflicting files as they now read) with `parents`. HEAD does not move; whatever HEAD
   * or the index said before (an agent's own commits, a merge in progress) has no say in
   * the commit. A repository nested in the tree is left out, and `leftOut` told.
   */
  async snapshotCommit(
    parents: readonly string[],
    message: string,
    leftOut?: LeftOut,
  ): Promise<string> {
    for (const p of parents) checkRefName(p);
    const { files } = await this.filesAt(parents[0] ?? 'HEAD');
    if (files.nested.length > 0) await leftOut?.(files.nested);
    const tree = await this.writeFilesTree(files);
    const out = await this.git.run(
      `cannot commit in ${this.path}`,
      ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'],
      { input: message },
    );
    this.known.wrote(out.trim(), tree, files.entries);
    return out.trim();
  }

  /** `standAt` detached (no branch moves), ignored files (installed dependencies) kept. */
  detachAt(sha: string): Promise<void> {
    return this.standAt(sha, { detach: true });
  }

  /** Moves this tree's branch (and its checkout) forward to `sha`; false when that is no fast-forward. */
  async fastForward(sha: string): Promise<boolean> {
    checkRefName(sha);
    const r = await this.git.try(['merge', '--ff-only', '--quiet', sha]);
    return r.exitCode === 0;
  }

  /** `standAt` with HEAD's branch moved, ignored files kept. */
  resetHard(sha: string): Promise<void> {
    return this.standAt(sha, {});
  }

  /**
   * Paths whose files differ from HEAD (read by epicflow, see `filesAt`), untracked files
   * that are not ignored and nested repositories included; a path set aside that still
   * holds what it held then is not one. Sorted.
   */
  async dirtyPaths(): Promise<string[]> {
    const { tracked, files } = await this.filesAt(await this.head(), {
      hashUntracked: (path) => this.setAside.has(path),
    });
    this.keepSetAside(tracked, files.entries);
    return [
      ...[...differences(tracked, files.entries).keys()].map(utf8Path),
      ...files.nested,
    ].sort();
  }

  /**
   * Every path that differs from `base` in this tree: in commits made on top of
   * it (or on another HEAD altogether), and in the files as they are, ignored
   * ones and nested repositories too. What a read-only run left behind, sorted.
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
    const { tracked, files } = await this.filesAt('HEAD', {
      ignored: false,
      hashUntracked: () => false,
    });
    const now = [...[...differences(tracked, files.entries).keys()].map(utf8Path), ...files.nested];
    return [...new Set([...splitNul(committed), ...now])].sort();
  }

  /** `standAt` detached (no branch moves), ignored files removed too: the tree as checked out. */
  discardTo(sha: string): Promise<void> {
    return this.standAt(sha, { detach: true, ignored: false });
  }

  /**
   * The tree, index and HEAD (detached, or its branch moved) at `sha`: the files written
   * back, untracked ones removed (ignored ones too when `ignored` is false); a merge in
   * progress is dropped.
   */
  private async standAt(
    sha: string,
    options: { readonly detach?: true; readonly ignored?: false },
  ): Promise<void> {
    checkRefName(sha);
    await this.putBack(sha, options.ignored === false ? { ignored: false } : {});
    await this.moveHead(sha, null, options.detach === true);
    await dropMergeState(this.gitDir);
  }

  async isClean(): Promise<boolean> {
    return (await this.dirtyPaths()).length === 0;
  }
}
