/**
 * The diff a story's perimeter is judged on (committed changes, as stored) and the
 * tree that restores paths outside it, for one work tree: `Worktree` calls these with its
 * runner (and writes the tree back, write-back.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import {
  checkRefName,
  DIFF_AS_STORED,
  mergeInIndexOrder,
  MODES,
  NUL,
  splitNul,
  STATUSES,
  type ChangedPath,
  type TreeEntry,
} from './listings.js';
import type { GitRunner } from './run-git.js';

/**
 * Committed changes of `head` (HEAD by default) against its merge base with `baseRef`
 * (renames split in two): what merging `head` would bring, read from commits, never
 * from the working tree.
 */
export async function changedPaths(
  git: GitRunner,
  path: string,
  baseRef: string,
  head: string,
): Promise<ChangedPath[]> {
  checkRefName(baseRef);
  checkRefName(head);
  const out = await git.run(`cannot diff ${head} against ${baseRef} in ${path}`, [
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
      change.symlinkTarget = await git.run(`cannot read symlink ${path}`, [
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
 * The tree of paths (files or directory prefixes) put back as they are in `fromRef`:
 * present there → as there, absent there → gone; every other path as the index has it
 * (tracked files elsewhere and their uncommitted changes are not the restore's). Null
 * when there is nothing to restore. Writing it to the tree is the caller's.
 *
 * Linear in the size of the repository, whatever the number of paths: the tree is
 * computed from two listings. Pathspecs would be matched path by pathspec, hours for
 * tens of thousands of paths.
 */
export async function restoredTree(
  git: GitRunner,
  path: string,
  fromRef: string,
  paths: readonly string[],
): Promise<string | null> {
  checkRefName(fromRef);
  if (paths.length === 0) return null;
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
  const current = (await git.run(`cannot read the index of ${path}`, ['write-tree'])).trim();
  const restored = (await treeEntries(git, fromRef)).filter((e) => under(e.path));
  const kept = (await treeEntries(git, current)).filter((e) => !under(e.path));
  // Both listings are in the index's order: merged, each entry goes in at the end, no shuffling.
  const target = mergeInIndexOrder(kept, restored);
  const scratch = await mkdtemp(join(tmpdir(), 'epicflow-restore-'));
  try {
    const indexFile = join(scratch, 'index');
    await git.run(
      `cannot build the restored tree in ${path}`,
      // ls-tree's own records are what --index-info reads; --replace: a restored file wins over a folder.
      ['update-index', '--add', '--replace', '-z', '--index-info'],
      { input: target.map((e) => `${e.record}${NUL}`).join(''), indexFile },
    );
    return (
      await git.run(`cannot write the restored tree in ${path}`, ['write-tree'], {
        indexFile,
      })
    ).trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Every file of a tree-ish as `ls-tree -r` writes it (in the index's order): the record and its path. */
async function treeEntries(git: GitRunner, ref: string): Promise<TreeEntry[]> {
  const out = await git.run(`cannot list the files of ${ref}`, [
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
