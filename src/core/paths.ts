/**
 * Path prefixes as the plan and the perimeter speak them (docs/plan-format.md): a path is
 * a prefix, not a glob, compared after normalisation. Pure string functions; they
 * never touch the file system.
 */

/** The config file locations epicflow reads (docs/config.md); stories may not own them. */
export const DEFAULT_CONFIG_PATHS: readonly string[] = ['.github/epicflow.yml', 'epicflow.yml'];

/**
 * Everything under `.github/` runs in CI with the repository's secrets when a branch is pushed:
 * workflows, but also the composite actions and scripts they call.
 */
const GITHUB_DIR = '.github';

/**
 * Trims, turns `\` into `/`, collapses repeated slashes, drops trailing `/` and
 * leading `./` (repeatedly). `.` (or `./`) stays `.`, the whole repository; a
 * lone `/` stays `/` so that it is still seen as absolute.
 */
export function normalisePath(p: string): string {
  let s = p
    .trim()
    .replace(/\\/g, '/')
    .replace(/\/{2,}/g, '/');
  while (s.length > 1 && s.endsWith('/')) s = s.slice(0, -1);
  while (s.startsWith('./')) s = s.slice(2);
  return s;
}

/**
 * True when `file` equals `prefix` or lies below it; `.` contains everything.
 * Both arguments must already be normalised.
 */
export function isWithin(file: string, prefix: string): boolean {
  if (prefix === '.') return true;
  return file === prefix || file.startsWith(`${prefix}/`);
}

/**
 * The folders a step is given: `folders`, and the one it starts in too unless that lies in
 * one of them (a package's folder in its checkout goes with the checkout, never by itself).
 */
export function withStartFolder(start: string, folders: readonly string[]): string[] {
  return folders.some((f) => isWithin(start, f)) ? [...folders] : [start, ...folders];
}

/** Two prefixes overlap when one is within the other. */
export function overlaps(a: string, b: string): boolean {
  return isWithin(a, b) || isWithin(b, a);
}

/**
 * Why a (normalised) path may not appear in a plan, or undefined when it is safe.
 * `.git` is matched without regard to case because case-insensitive file systems
 * treat `.GIT` as the same directory.
 */
export function unsafePathReason(p: string): string | undefined {
  if (p.length === 0) return 'is empty';
  // Checked before anything else so that a stray newline is named as such.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(p)) return 'contains a control character';
  if (p.startsWith('/')) return 'is absolute';
  if (/^[A-Za-z]:/.test(p)) return 'starts with a drive letter';
  if (/[*?[\]]/.test(p)) return 'contains a glob character (paths are prefixes, not globs)';
  const segments = p.split('/');
  if (segments.includes('..')) return 'contains a ".." segment';
  if (segments.some((s) => s.toLowerCase() === '.git')) return 'is inside .git';
  return undefined;
}

/**
 * True when a change to `p` needs `allowWorkflowChanges`: it lies inside `.github/`
 * (workflows, composite actions, the scripts they run) or is one of epicflow's own config files.
 */
export function isProtectedPath(
  p: string,
  configPaths: readonly string[] = DEFAULT_CONFIG_PATHS,
): boolean {
  const path = normalisePath(p);
  return isWithin(path, GITHUB_DIR) || configPaths.some((c) => normalisePath(c) === path);
}

/**
 * Paths as a note names them: a top-level folder with more than `folded` of them once, with
 * their count (`.venv/ (1,489 files)`, where setup made a virtual environment), the others
 * one by one.
 */
export function foldFolders(paths: readonly string[], folded = 3): string[] {
  const byFolder = new Map<string, number>();
  for (const p of paths) {
    const at = p.indexOf('/');
    if (at > 0) byFolder.set(p.slice(0, at), (byFolder.get(p.slice(0, at)) ?? 0) + 1);
  }
  const out: string[] = [];
  const named = new Set<string>();
  for (const p of paths) {
    const at = p.indexOf('/');
    const folder = at > 0 ? p.slice(0, at) : undefined;
    const count = folder === undefined ? 0 : (byFolder.get(folder) ?? 0);
    if (folder === undefined || count <= folded) out.push(p);
    else if (!named.has(folder)) {
      named.add(folder);
      out.push(`${folder}/ (${count.toLocaleString('en-US')} files)`);
    }
  }
  return out;
}

/** Paths named in a note: the first `max`, then how many more (`a, b and 3 more`). */
export function someOf(paths: readonly string[], max = 20): string {
  const shown = paths.slice(0, max).join(', ');
  const more = paths.length - max;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/**
 * An exclude line (`info/exclude`, `.gitignore`) matching `path` alone, from the tree's
 * top: anchored, its glob characters and trailing spaces escaped. Null for a path no such
 * line can name (one holding a newline).
 */
export function excludePattern(path: string): string | null {
  if (path === '' || /[\n\r]/.test(path)) return null;
  const escaped = path.replace(/[\\*?[]/g, '\\$&').replace(/ +$/, (m) => '\\ '.repeat(m.length));
  return `/${escaped}`;
}
