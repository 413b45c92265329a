/**
 * How epicflow's git commands read git: diff flags that show changes as stored, parsers
 * of git's NUL-separated listings, ref names checked, and paths in the index's own order.
 */
import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EpicflowError } from '../../core/errors.js';

export interface ChangedPath {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'type-changed';
  oldPath?: string;
  mode: 'file' | 'executable' | 'symlink' | 'submodule';
  /** For a symlink: where it points (as stored in the link). */
  symlinkTarget?: string;
}

export const NUL = '\0';

/**
 * Before every diff epicflow reads: what changed, as git stores it, whatever
 * the tree's `.gitattributes` (`-diff`, `diff=<driver>`), `.gitmodules`
 * (`ignore = all`) or the config (a textconv, an external diff, colour, other
 * prefixes) say. Those would hide changes from the perimeter, the judge and
 * the oracle guard, or change the text they parse.
 */
export const DIFF_AS_STORED = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--ignore-submodules=none',
  '--no-relative',
];

/** A unified diff as people and the oracle guard read it: every file as text, `a/` and `b/`. */
export const PATCH_AS_TEXT = [...DIFF_AS_STORED, '--text', '--src-prefix=a/', '--dst-prefix=b/'];

/** Every file of a tree-ish (add it), recursively, repository-relative, NUL-separated. */
export const LIST_FILES = ['ls-tree', '-r', '-z', '--name-only', '--full-tree'];

export function splitNul(text: string): string[] {
  return text.split(NUL).filter((s) => s !== '');
}

/** A real path when it exists, so `/tmp` and `/private/tmp` compare equal. */
export function canonical(path: string): string {
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

export function checkRefName(ref: string): void {
  if (ref === '' || ref.startsWith('-') || /[\0\n]/.test(ref)) {
    throw new EpicflowError('git', `invalid ref name: ${JSON.stringify(ref)}`);
  }
}

export function fullBranchRef(ref: string): string {
  return ref.startsWith('refs/') ? ref : `refs/heads/${ref}`;
}

export interface WorktreeEntry {
  path: string;
  head?: string;
  branch?: string;
  prunable: boolean;
  bare: boolean;
}

export function parseWorktreeList(porcelainZ: string): WorktreeEntry[] {
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
export function parseStatusPaths(porcelainZ: string): string[] {
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

export const MODES: Record<string, ChangedPath['mode']> = {
  '100644': 'file',
  '100755': 'executable',
  '120000': 'symlink',
  '160000': 'submodule',
};

export const STATUSES: Record<string, ChangedPath['status']> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  T: 'type-changed',
};

export interface TreeEntry {
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
export function mergeInIndexOrder(a: readonly TreeEntry[], b: readonly TreeEntry[]): TreeEntry[] {
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
