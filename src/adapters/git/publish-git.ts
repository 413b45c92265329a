/**
 * The publish side's git: a bare repository holding the epic branch and nothing else, where
 * a work job's result is read from its objects. Only object commands run here (bundle,
 * fetch from a file, ls-tree, cat-file, diff between commits, merge-tree, commit-tree,
 * update-ref): there is no work tree, so nothing in the result is ever checked out, filtered
 * or run. The work side's half, `writeResultBundle`, writes the bundle this reads.
 */
import { stat } from 'node:fs/promises';
import { EpicflowError } from '../../core/errors.js';
import type { TreeFile } from '../../core/prompt/starting-code.js';
import { RESULT_REFS, ResultRefusal } from '../../core/publish/result.js';
import type { ScannedCommit } from '../../core/publish/secrets.js';
import { checkRefName, PATCH_AS_TEXT, splitNul, type ChangedPath, NUL } from './listings.js';
import { commitTree, isAncestor, OBJECT_ID, readBlobs, treeFiles } from './objects.js';
import { tooOldToMerge } from './merge-objects.js';
import { changedPaths } from './perimeter-diff.js';
import { GitRunner, gitError, type GitIdentity } from './run-git.js';

/** Where a result's refs are fetched to, and removed from once it is read. */
const QUARANTINE = 'refs/epicflow-quarantine/';

/** The commits a result bundle brings, by the name the work side gave them. */
interface ImportedResult {
  readonly story: string;
  readonly gated: string | null;
}

type TreeMerge =
  | { readonly ok: true; readonly tree: string }
  | { readonly ok: false; readonly conflicts: readonly string[] };

export class PublishGit {
  private constructor(
    readonly gitDir: string,
    private readonly git: GitRunner,
  ) {}

  /** Opens the bare repository at `gitDir`; any other is refused (publish has no work tree). */
  static async open(gitDir: string, identity: GitIdentity): Promise<PublishGit> {
    const git = new GitRunner(gitDir, identity, undefined, { gitDir });
    const bare = await git.try(['rev-parse', '--is-bare-repository']);
    if (bare.exitCode !== 0 || bare.stdout.trim() !== 'true') {
      throw new EpicflowError('git', `not a bare git repository: ${gitDir}`, {
        details: [
          'the publish side reads results from objects only: it works in a bare repository',
        ],
      });
    }
    return new PublishGit(gitDir, git);
  }

  /**
   * Reads a result bundle into the quarantine: not larger than `maxBytes`, a bundle git
   * verifies against this repository, holding the story's ref (and the gated merge's
   * exactly when `withGated`) and no other. Returns the commits it brings.
   */
  async importBundle(
    file: string,
    options: { readonly maxBytes: number; readonly withGated: boolean },
  ): Promise<ImportedResult> {
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      throw new ResultRefusal('missing', `the result bundle is missing: ${file}`);
    }
    if (size > options.maxBytes) {
      throw new ResultRefusal(
        'too-large',
        `the result bundle is ${size} bytes, more than the ${options.maxBytes} allowed`,
      );
    }
    const heads = await this.git.try(['bundle', 'list-heads', file]);
    if (heads.exitCode !== 0) {
      throw new ResultRefusal('malformed', `the result bundle is not a git bundle: ${file}`, [
        ...heads.stderr.split('\n').filter((l) => l.trim() !== ''),
      ]);
    }
    const refs = new Map<string, string>();
    for (const line of heads.stdout.split('\n')) {
      const [sha = '', ref = ''] = line.trim().split(/\s+/);
      if (ref !== '') refs.set(ref, sha);
    }
    const wanted = [RESULT_REFS.story, ...(options.withGated ? [RESULT_REFS.gated] : [])];
    const extra = [...refs.keys()].filter((r) => !wanted.includes(r as (typeof wanted)[number]));
    const absent = wanted.filter((r) => !refs.has(r));
    if (extra.length > 0 || absent.length > 0) {
      throw new ResultRefusal(
        'refs',
        `the result bundle does not hold exactly ${wanted.join(' and ')}`,
        [...extra.map((r) => `unexpected ref: ${r}`), ...absent.map((r) => `missing ref: ${r}`)],
      );
    }
    for (const sha of refs.values()) {
      if (!OBJECT_ID.test(sha)) {
        throw new ResultRefusal('malformed', `the result bundle names an invalid object: ${sha}`);
      }
    }
    const verify = await this.git.try(['bundle', 'verify', file]);
    if (verify.exitCode !== 0) {
      const lines = verify.stderr.split('\n').filter((l) => l.trim() !== '');
      // Its prerequisites are commits this repository's epic branch does not have.
      if (/lacks these prerequisite/i.test(verify.stderr)) {
        throw new ResultRefusal(
          'not-descended',
          'the result bundle is built on commits the epic branch does not have',
          lines,
        );
      }
      throw new ResultRefusal('malformed', `git cannot verify the result bundle ${file}`, lines);
    }
    const fetched = await this.git.try([
      // Objects are checked as they come in where git does so for bundles (2.46 and later).
      '-c',
      'fetch.fsckObjects=true',
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      file,
      ...wanted.map((r) => `+${r}:${QUARANTINE}${r.slice(r.lastIndexOf('/') + 1)}`),
    ]);
    if (fetched.exitCode !== 0) {
      await this.dropQuarantine();
      throw new ResultRefusal('malformed', `cannot read the objects of the result bundle ${file}`, [
        ...fetched.stderr.split('\n').filter((l) => l.trim() !== ''),
      ]);
    }
    return {
      story: refs.get(RESULT_REFS.story) as string,
      gated: options.withGated ? (refs.get(RESULT_REFS.gated) as string) : null,
    };
  }

  /** Removes the quarantine's refs (the objects stay, unreferenced, until git prunes them). */
  async dropQuarantine(): Promise<void> {
    const out = await this.git.run('cannot list the quarantine', [
      'for-each-ref',
      '--format=%(refname)',
      QUARANTINE,
    ]);
    for (const ref of out.split('\n').filter((r) => r !== '')) {
      await this.git.run(`cannot remove ${ref}`, ['update-ref', '-d', ref]);
    }
  }

  /** Every ref of the repository and where it points (`refs/…` → sha). */
  async refs(): Promise<Map<string, string>> {
    const out = await this.git.run('cannot list refs', [
      'for-each-ref',
      '--format=%(refname) %(objectname)',
    ]);
    return new Map(
      out
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split(' ') as [string, string]),
    );
  }

  /** The commit `ref` names; null when none. */
  async commitOf(ref: string): Promise<string | null> {
    checkRefName(ref);
    const r = await this.git.try(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return r.exitCode === 0 ? r.stdout.trim() : null;
  }

  /** The tree of `commit`. */
  async treeOf(commit: string): Promise<string> {
    checkRefName(commit);
    return (
      await this.git.run(`cannot read the tree of ${commit}`, ['rev-parse', `${commit}^{tree}`])
    ).trim();
  }

  /** The parents of `commit`, in order. */
  async parentsOf(commit: string): Promise<string[]> {
    checkRefName(commit);
    const out = await this.git.run(`cannot read the parents of ${commit}`, [
      'rev-list',
      '--parents',
      '-n',
      '1',
      commit,
    ]);
    return out.trim().split(/\s+/).slice(1);
  }

  isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return isAncestor(this.git, ancestor, descendant);
  }

  /** What merging `head` into `base` brings (against their merge base), with modes and link targets. */
  changedPaths(base: string, head: string): Promise<ChangedPath[]> {
    return changedPaths(this.git, this.gitDir, base, head);
  }

  /** The unified diff of the same changes (of `paths` only, when given), every file as text. */
  async diff(base: string, head: string, paths?: readonly string[]): Promise<string> {
    checkRefName(base);
    checkRefName(head);
    return this.git.run(
      `cannot diff ${head} against ${base}`,
      ['diff', ...PATCH_AS_TEXT, `${base}...${head}`, '--', ...(paths ?? [])],
      { literalPathspecs: true },
    );
  }

  /** The best common ancestor of two commits; null when they share none. */
  async mergeBase(a: string, b: string): Promise<string | null> {
    checkRefName(a);
    checkRefName(b);
    const out = await this.git.try(['merge-base', a, b]);
    return out.exitCode === 0 ? out.stdout.trim() || null : null;
  }

  treeFiles(commit: string): Promise<TreeFile[]> {
    return treeFiles(this.git, commit);
  }

  readBlobs(objects: readonly string[]): Promise<Map<string, Uint8Array>> {
    return readBlobs(this.git, objects);
  }

  /**
   * The merge on `head`'s first-parent line that brought `commit` in (its second parent), or
   * null: how a story already merged is found again, among the last 1,000 merges.
   */
  async mergeOf(commit: string, head: string): Promise<string | null> {
    checkRefName(commit);
    checkRefName(head);
    const out = await this.git.run(`cannot list the merges of ${head}`, [
      'rev-list',
      '--first-parent',
      '--merges',
      '--parents',
      '-n',
      '1000',
      head,
      '--',
    ]);
    for (const line of out.split('\n')) {
      const [merge, , second] = line.trim().split(/\s+/);
      if (merge !== undefined && second === commit) return merge;
    }
    return null;
  }

  /** How many commits are reachable from `head` and not from `base`. */
  async countCommits(base: string, head: string): Promise<number> {
    checkRefName(base);
    checkRefName(head);
    const out = await this.git.run(`cannot count the commits of ${head}`, [
      'rev-list',
      '--count',
      head,
      `^${base}`,
      '--',
    ]);
    return Number(out.trim());
  }

  /**
   * Every commit reachable from `head` and not from `base` (what a push of `head` over
   * `base` brings), each with its message and its diff against its first parent.
   */
  async commitsBetween(base: string, head: string): Promise<ScannedCommit[]> {
    checkRefName(base);
    checkRefName(head);
    const list = await this.git.run(`cannot list the commits of ${head}`, [
      'rev-list',
      head,
      `^${base}`,
      '--',
    ]);
    const commits: ScannedCommit[] = [];
    for (const sha of list.split('\n').filter((l) => l !== '')) {
      const message = await this.git.run(`cannot read commit ${sha}`, [
        'log',
        '-1',
        '--format=%B',
        sha,
      ]);
      const patch = await this.git.run(`cannot diff commit ${sha}`, [
        'show',
        '--format=',
        '--diff-merges=first-parent',
        ...PATCH_AS_TEXT,
        sha,
        '--',
      ]);
      commits.push({ sha, message, patch });
    }
    return commits;
  }

  /** The merge of `theirs` into `ours`, written as a tree only (`merge-tree --write-tree`). */
  async mergeTree(ours: string, theirs: string): Promise<TreeMerge> {
    checkRefName(ours);
    checkRefName(theirs);
    const r = await this.git.try([
      'merge-tree',
      '--write-tree',
      '-z',
      '--name-only',
      '--no-messages',
      ours,
      theirs,
    ]);
    if (r.exitCode === 129) throw tooOldToMerge();
    const [tree = '', ...paths] = r.stdout.split(NUL);
    if (r.exitCode === 0) return { ok: true, tree: tree.trim() };
    if (r.exitCode === 1) {
      return { ok: false, conflicts: [...new Set(splitNul(paths.join(NUL)))] };
    }
    throw gitError(`cannot merge ${theirs} into ${ours}`, r);
  }

  commitTree(tree: string, parents: readonly string[], message: string): Promise<string> {
    return commitTree(this.git, tree, parents, message);
  }

  /** Moves `ref` to `next` only if it is at `expected` (null: must not exist); false when not. */
  async updateRef(ref: string, next: string, expected: string | null): Promise<boolean> {
    checkRefName(ref);
    const r = await this.git.try(['update-ref', ref, next, expected ?? '']);
    return r.exitCode === 0;
  }
}

/**
 * The work side's half: writes `file`, a bundle of the story's commits (and of the merge the
 * gates ran on), without what the epic branch has already (`base`, `epicHead`). The refs it
 * names exist only while the bundle is written.
 */
export async function writeResultBundle(
  git: { read(what: string, args: readonly string[]): Promise<string> },
  file: string,
  commits: {
    readonly base: string;
    readonly epicHead: string;
    readonly storyCommit: string;
    readonly gated: string | null;
  },
): Promise<void> {
  const refs: [string, string][] = [[RESULT_REFS.story, commits.storyCommit]];
  if (commits.gated !== null) refs.push([RESULT_REFS.gated, commits.gated]);
  for (const [ref, sha] of refs) {
    checkRefName(sha);
    await git.read(`cannot set ${ref}`, ['update-ref', ref, sha]);
  }
  try {
    await git.read(`cannot write the result bundle ${file}`, [
      'bundle',
      'create',
      '--quiet',
      file,
      ...refs.map(([ref]) => ref),
      `^${commits.base}`,
      `^${commits.epicHead}`,
    ]);
  } finally {
    for (const [ref] of refs) await git.read(`cannot remove ${ref}`, ['update-ref', '-d', ref]);
  }
}
