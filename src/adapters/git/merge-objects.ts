/**
 * Merges made from git's objects alone, never over a work tree: `merge-tree --write-tree`,
 * then each conflict settled for one side. Git 2.39's `merge-tree` takes no `-X`; what `-X
 * ours`/`-X theirs` did is done path by path: a conflicting text file is merged again by
 * `merge-file --ours`/`--theirs` (its three blobs written to epicflow's own folder), a binary
 * one taken as the side has it (both as git's `-X` did), and what neither settles (a deletion
 * against a change, a link) is taken as the side has it (gone when the side has none) and
 * listed, as git's merge left it to epicflow before.
 * The command runs from a folder of epicflow's own with no work tree named: no attribute,
 * filter or merge driver of a tree is read.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { NUL } from './listings.js';
import { readBlobs } from './objects.js';
import { gitError, type GitRunner } from './run-git.js';
import { treeEntries, utf8Path, type FileEntry } from './tree-of-files.js';

/** A merge's tree and the paths (UTF-8) left for one side. */
export interface ObjectMerge {
  /** With no side, git's own: the conflicting files with their markers. */
  readonly tree: string;
  /** Every conflicting path without a side; with one, those `merge-file` could not settle. */
  readonly conflicts: string[];
}

const isFile = (e: FileEntry | undefined): e is FileEntry =>
  e !== undefined && (e.mode === '100644' || e.mode === '100755');

/** The git on PATH cannot merge without a work tree: said with what to install. */
export function tooOldToMerge(): EpicflowError {
  return new EpicflowError(
    'git',
    'this git cannot merge without a work tree: epicflow merges with `git merge-tree --write-tree`, which needs git 2.38 or later',
    {
      details: [
        '`git --version` says which git is on PATH; install a newer one (Debian 12 and Ubuntu 24.04 have it; on Ubuntu 22.04, the git-core PPA)',
      ],
    },
  );
}

/** A path as its bytes (git's output read as `latin1`, see tree-of-files.ts). */
const asBytes = (path: string): Buffer => Buffer.from(path, 'latin1');

/**
 * `theirs` merged into `ours` (commits) by `git` (a runner with no work tree, its folder
 * `scratch` epicflow's own); with `favor`, every conflict settled for that side.
 */
export async function mergeObjects(
  git: GitRunner,
  scratch: string,
  ours: string,
  theirs: string,
  favor: 'ours' | 'theirs' | null,
): Promise<ObjectMerge> {
  const r = await git.try(['merge-tree', '--write-tree', '-z', '--no-messages', ours, theirs], {
    bytes: true,
  });
  // 129: git's usage error. Before 2.38, `merge-tree` takes three commits and no `--write-tree`.
  if (r.exitCode === 129) throw tooOldToMerge();
  if (r.exitCode !== 0 && r.exitCode !== 1) {
    throw gitError(`cannot merge ${theirs} into ${ours}`, r);
  }
  const [first = '', ...rest] = (r.stdoutBytes ?? Buffer.alloc(0)).toString('latin1').split(NUL);
  const tree = first.trim();
  if (r.exitCode === 0) return { tree, conflicts: [] };
  // Each conflicting entry: "<mode> SP <object> SP <stage> TAB <path>", then an empty record.
  const stages = new Map<string, Map<string, FileEntry>>();
  for (const record of rest) {
    if (record === '') break;
    const tab = record.indexOf('\t');
    const [mode = '', object = '', stage = ''] = record.slice(0, tab).split(' ');
    const path = record.slice(tab + 1);
    const sides = stages.get(path) ?? new Map<string, FileEntry>();
    sides.set(stage, { mode, object });
    stages.set(path, sides);
  }
  if (favor === null) return { tree, conflicts: [...stages.keys()].map(utf8Path) };
  const side = favor === 'ours' ? ours : theirs;
  let sideEntries: Map<string, FileEntry> | undefined;
  const lines: string[] = [];
  const unsettled: string[] = [];
  for (const [path, sides] of stages) {
    const [base, mine, other] = [sides.get('1'), sides.get('2'), sides.get('3')];
    if (isFile(mine) && isFile(other) && (base === undefined || isFile(base))) {
      const kept = favor === 'ours' ? mine : other;
      // A binary file is the side's as it is, settled as git's `-X` settles it.
      const merged = (await mergeFile(git, scratch, [base, mine, other], favor)) ?? kept.object;
      lines.push(`${kept.mode} ${merged}\t${path}`);
      continue;
    }
    unsettled.push(path);
    sideEntries ??= await treeEntries(git, side);
    const taken = sideEntries.get(path);
    // Mode 0 takes the path out of the index.
    lines.push(
      taken ? `${taken.mode} ${taken.object}\t${path}` : `0 ${'0'.repeat(tree.length)}\t${path}`,
    );
  }
  const indexFile = join(scratch, 'merge-index');
  await git.run(`cannot read the merge of ${theirs} into ${ours}`, ['read-tree', tree], {
    indexFile,
  });
  await git.run(
    `cannot settle the merge of ${theirs} into ${ours}`,
    ['update-index', '-z', '--index-info'],
    { input: asBytes(lines.map((l) => `${l}${NUL}`).join('')), indexFile },
  );
  const settled = await git.run(
    `cannot write the merge of ${theirs} into ${ours}`,
    ['write-tree'],
    {
      indexFile,
    },
  );
  return { tree: settled.trim(), conflicts: unsettled.map(utf8Path).sort() };
}

/** The three blobs merged by `merge-file`, conflicting hunks for `favor`; its blob, or null (binary). */
async function mergeFile(
  git: GitRunner,
  scratch: string,
  [base, mine, other]: [FileEntry | undefined, FileEntry, FileEntry],
  favor: 'ours' | 'theirs',
): Promise<string | null> {
  const blobs = await readBlobs(
    git,
    [base, mine, other].flatMap((e) => (e === undefined ? [] : [e.object])),
  );
  const files = ['base', 'ours', 'theirs'].map((name) => join(scratch, `merge-${name}`));
  await Promise.all(
    [base, mine, other].map((e, i) =>
      writeFile(files[i] as string, e === undefined ? '' : (blobs.get(e.object) ?? '')),
    ),
  );
  const [baseFile = '', oursFile = '', theirsFile = ''] = files;
  const r = await git.try(['merge-file', '-p', `--${favor}`, oursFile, baseFile, theirsFile], {
    bytes: true,
  });
  // Not 0: a binary file (or a conflict left, which `--ours`/`--theirs` never leaves).
  if (r.exitCode !== 0) return null;
  const out = await git.run(
    'cannot write a merged file',
    ['hash-object', '-w', '--no-filters', '--stdin'],
    {
      input: r.stdoutBytes ?? Buffer.alloc(0),
    },
  );
  return out.trim();
}
