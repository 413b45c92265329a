/**
 * The perimeter: which of a story's changed paths it may merge. Pure: the git
 * adapter lists the changes (with modes and symlink targets), this decides.
 */
import { posix } from 'node:path';
import { isProtectedPath, isWithin, normalisePath } from '../paths.js';

/** One changed path as the git adapter reports it (structurally the same type). */
export interface PerimeterChange {
  readonly path: string;
  readonly status: 'added' | 'modified' | 'deleted' | 'renamed' | 'type-changed';
  readonly mode: 'file' | 'executable' | 'symlink' | 'submodule';
  readonly symlinkTarget?: string;
}

export type ForbiddenReason =
  | 'inside .git'
  | 'workflow file'
  | 'file under .github'
  | 'epicflow config file'
  | 'symlink pointing outside the repository'
  | 'submodule change'
  | 'path that is not UTF-8';

export interface PerimeterResult {
  /** Within `owns` and not forbidden: merged as is. */
  readonly owned: readonly string[];
  /** Within `reads`: context only, must be put back. */
  readonly readOnly: readonly string[];
  /** Neither owned nor read: must be put back. */
  readonly outside: readonly string[];
  /** Never merged, whatever the story owns. */
  readonly forbidden: readonly { readonly path: string; readonly reason: ForbiddenReason }[];
}

interface PerimeterInput {
  readonly changes: readonly PerimeterChange[];
  readonly owns: readonly string[];
  readonly reads: readonly string[];
  /** The epicflow config file(s), relative to the repository root. */
  readonly configPaths: readonly string[];
  readonly allowWorkflowChanges: boolean;
}

/** True when a symlink at `linkPath` with `target` resolves outside the repository. */
export function symlinkEscapes(linkPath: string, target: string): boolean {
  if (target.startsWith('/') || /^[A-Za-z]:[\\/]/.test(target) || target.startsWith('\\')) {
    return true;
  }
  const resolved = posix.normalize(posix.join(posix.dirname(linkPath), target.replace(/\\/g, '/')));
  return (
    resolved === '..' ||
    resolved.startsWith('../') ||
    resolved.split('/').some((s) => s.toLowerCase() === '.git')
  );
}

function forbiddenReason(change: PerimeterChange, input: PerimeterInput): ForbiddenReason | null {
  const { path } = change;
  // Git's paths are read as UTF-8: a byte that is not one reads as U+FFFD, so two paths
  // could read as one. Such a path is never merged, whoever owns what it reads as.
  if (path.includes('\uFFFD')) return 'path that is not UTF-8';
  // Case-insensitive: case-insensitive file systems treat `.GIT` as `.git`.
  if (path.split('/').some((s) => s.toLowerCase() === '.git')) return 'inside .git';
  if (!input.allowWorkflowChanges && isProtectedPath(path, input.configPaths)) {
    if (input.configPaths.some((c) => normalisePath(c) === path)) return 'epicflow config file';
    return isWithin(path, '.github/workflows') ? 'workflow file' : 'file under .github';
  }
  if (change.mode === 'submodule') return 'submodule change';
  if (
    change.mode === 'symlink' &&
    change.status !== 'deleted' &&
    symlinkEscapes(path, change.symlinkTarget ?? '/')
  ) {
    return 'symlink pointing outside the repository';
  }
  return null;
}

export function classifyChanges(input: PerimeterInput): PerimeterResult {
  const owned: string[] = [];
  const readOnly: string[] = [];
  const outside: string[] = [];
  const forbidden: { path: string; reason: ForbiddenReason }[] = [];
  // A changed path is judged as git names it, character for character: never trimmed or
  // rewritten, so ` src/a`, `src/a ` or `src\a\x` (other files than `src/a/…`) are never
  // taken for one of the story's own. Git's paths are canonical already (no `./`, `//`
  // or trailing `/`); the plan's prefixes were normalised when the plan was read.
  for (const change of input.changes) {
    const { path } = change;
    const reason = forbiddenReason(change, input);
    if (reason !== null) forbidden.push({ path, reason });
    else if (input.reads.some((r) => isWithin(path, r))) readOnly.push(path);
    else if (input.owns.some((o) => isWithin(path, o))) owned.push(path);
    else outside.push(path);
  }
  return { owned, readOnly, outside, forbidden };
}

/** True when nothing needs putting back and nothing is forbidden. */
export function isClean(result: PerimeterResult): boolean {
  return result.readOnly.length + result.outside.length + result.forbidden.length === 0;
}

/** The paths that must be put back as on the epic branch, in order. */
export function strayPaths(result: PerimeterResult): string[] {
  return [...result.readOnly, ...result.outside, ...result.forbidden.map((f) => f.path)];
}

/** One feedback text for the coder, one line per stray path. */
export function describeStrays(result: PerimeterResult): string[] {
  return [
    ...result.readOnly.map((p) => `${p}: read-only for this story (context, never change)`),
    ...result.outside.map((p) => `${p}: not in this story's owned paths`),
    ...result.forbidden.map((p) => `${p.path}: never merged (${p.reason})`),
  ];
}

/**
 * The note (and event) when git's own configuration was put back after code ran
 * in a story's tree: `files` are labels like `.git/config`, `during` says what ran
 * (`round 2 (bot coding)`, `the gates`).
 */
export function describeGitConfigRestore(files: readonly string[], during: string): string {
  return `restored ${files.join(', ')}: git's configuration was changed during ${during}`;
}
