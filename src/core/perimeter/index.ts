/**
 * The perimeter: which of a story's changed paths it may merge. Pure: the git
 * adapter lists the changes (with modes and symlink targets), this decides.
 */
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
  /**
   * Every symbolic link of the commit's tree (path → target, as stored in git's objects):
   * a changed link is followed through them. Without it, only the changed links are.
   */
  readonly links?: ReadonlyMap<string, string>;
}

/** Links followed before a chain counts as a loop (Linux's own limit), and is refused. */
const MAX_LINKS = 40;

function isAbsoluteTarget(target: string): boolean {
  return target.startsWith('/') || /^[A-Za-z]:[\\/]/.test(target) || target.startsWith('\\');
}

/**
 * Where the link at `linkPath` leads, followed component by component through the links
 * of the commit's tree (`links`), as the kernel would follow them in a checkout: a `..`
 * after a link climbs from where that link leads, not from where it stands. It escapes
 * when any step is absolute, climbs above the top, enters `.git` (any case) or follows
 * more than 40 links (a loop). `through`: every link the chain followed, itself first.
 */
export function followLink(
  linkPath: string,
  links: ReadonlyMap<string, string>,
): { readonly escapes: boolean; readonly through: readonly string[] } {
  const through = [linkPath];
  const parts = (target: string): string[] => target.replace(/\\/g, '/').split('/');
  const first = links.get(linkPath) ?? '/';
  if (isAbsoluteTarget(first)) return { escapes: true, through };
  const dir = linkPath.split('/').slice(0, -1);
  let queue = parts(first);
  while (queue.length > 0) {
    const part = queue.shift() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (dir.length === 0) return { escapes: true, through };
      dir.pop();
      continue;
    }
    if (part.toLowerCase() === '.git') return { escapes: true, through };
    dir.push(part);
    const here = dir.join('/');
    const next = links.get(here);
    if (next === undefined) continue;
    through.push(here);
    if (through.length > MAX_LINKS || isAbsoluteTarget(next)) return { escapes: true, through };
    dir.pop();
    queue = [...parts(next), ...queue];
  }
  return { escapes: false, through };
}

/**
 * The changed links that make some link of the commit's tree lead out of the repository:
 * a changed link whose chain leaves, and for an unchanged link that now leaves, every
 * changed link its chain goes through (an old `a -> b/..` leaves once `b` becomes `.`).
 */
function escapingLinks(input: PerimeterInput): Set<string> {
  const changed = new Map<string, string>();
  for (const c of input.changes) {
    if (c.mode === 'symlink' && c.status !== 'deleted') changed.set(c.path, c.symlinkTarget ?? '/');
  }
  const escaping = new Set<string>();
  if (changed.size === 0) return escaping;
  const links = new Map(input.links ?? []);
  for (const [path, target] of changed) links.set(path, target);
  for (const path of links.keys()) {
    const { escapes, through } = followLink(path, links);
    if (!escapes) continue;
    // A changed link that leaves is refused itself; an old one, through the changed links it follows.
    if (changed.has(path)) escaping.add(path);
    else for (const link of through) if (changed.has(link)) escaping.add(link);
  }
  return escaping;
}

function forbiddenReason(
  change: PerimeterChange,
  input: PerimeterInput,
  escaping: ReadonlySet<string>,
): ForbiddenReason | null {
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
  if (escaping.has(path)) return 'symlink pointing outside the repository';
  return null;
}

export function classifyChanges(input: PerimeterInput): PerimeterResult {
  const owned: string[] = [];
  const readOnly: string[] = [];
  const outside: string[] = [];
  const forbidden: { path: string; reason: ForbiddenReason }[] = [];
  const escaping = escapingLinks(input);
  // A changed path is judged as git names it, character for character: never trimmed or
  // rewritten, so ` src/a`, `src/a ` or `src\a\x` (other files than `src/a/…`) are never
  // taken for one of the story's own. Git's paths are canonical already (no `./`, `//`
  // or trailing `/`); the plan's prefixes were normalised when the plan was read.
  for (const change of input.changes) {
    const { path } = change;
    const reason = forbiddenReason(change, input, escaping);
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
