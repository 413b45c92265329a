/**
 * The repository's files as the planner sees them: one path per line, trimmed
 * to a character budget. The top level is always listed; below it folders are
 * opened breadth first, smaller ones before larger ones at the same depth, as
 * long as the listing fits. A folder left closed shows as `dir/ (N files)`, so
 * a large folder (vendored code, fixtures) costs one line and never crowds out
 * the structure around it.
 */

/** Characters of the file listing in a planner prompt. */
export const TREE_BUDGET_CHARS = 8000;

interface Folder {
  /** Path without a trailing slash; '' for the repository root. */
  readonly path: string;
  readonly files: string[];
  readonly folders: Map<string, Folder>;
  /** Files below it, at any depth. */
  count: number;
}

function folder(path: string): Folder {
  return { path, files: [], folders: new Map(), count: 0 };
}

function buildTree(paths: readonly string[]): Folder {
  const root = folder('');
  for (const path of new Set(paths)) {
    if (path === '') continue;
    const parts = path.split('/');
    let at = root;
    at.count += 1;
    for (let i = 0; i < parts.length - 1; i++) {
      const sub = parts.slice(0, i + 1).join('/');
      let next = at.folders.get(sub);
      if (next === undefined) {
        next = folder(sub);
        at.folders.set(sub, next);
      }
      next.count += 1;
      at = next;
    }
    at.files.push(path);
  }
  return root;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The line of a closed folder. */
function closedLine(f: Folder): string {
  return `${f.path}/ (${plural(f.count, 'file')})`;
}

/** Lines an open folder contributes: its files, and one line per (closed) sub-folder. */
function openLines(f: Folder): string[] {
  return [...f.files, ...[...f.folders.values()].map(closedLine)];
}

/** Sort key of a line: the path, with a folder's slash (`src/`), so lines read in path order. */
function keyOf(line: string): string {
  const at = line.indexOf('/ (');
  return at === -1 ? line : line.slice(0, at + 1);
}

function cost(lines: readonly string[]): number {
  return lines.reduce((n, l) => n + l.length + 1, 0);
}

/**
 * The listing of `paths` (repository-relative, `/`-separated) in at most
 * `maxChars` characters: every file when it fits, otherwise folders closed as
 * `dir/ (N files)`. When even the top level does not fit, its first entries
 * are listed and one last line says how many more there are.
 */
export function trimTree(paths: readonly string[], maxChars: number = TREE_BUDGET_CHARS): string {
  const root = buildTree(paths);
  if (root.count === 0) return fit('(no files)', maxChars);
  // Each line costs its length plus a newline; the last newline is not written.
  const budget = maxChars + 1;
  const lines = new Map<string, string>();
  const top = openLines(root);
  if (cost(top) > budget) return topOnly(top.sort(byKey), budget);
  for (const l of top) lines.set(keyOf(l), l);
  let used = cost(top);

  // Closed folders are opened a depth at a time (so the queue needs no re-sorting):
  // within a depth, smaller first, then in path order. One that does not fit stays closed.
  const order = (a: Folder, b: Folder): number =>
    a.count - b.count || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  let level = [...root.folders.values()];
  while (level.length > 0) {
    level.sort(order);
    const next: Folder[] = [];
    for (const f of level) {
      const inner = openLines(f);
      const after = used - (closedLine(f).length + 1) + cost(inner);
      if (after > budget) continue;
      used = after;
      lines.delete(keyOf(closedLine(f)));
      for (const l of inner) lines.set(keyOf(l), l);
      next.push(...f.folders.values());
    }
    level = next;
  }
  return [...lines.values()].sort(byKey).join('\n');
}

function byKey(a: string, b: string): number {
  const x = keyOf(a);
  const y = keyOf(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The first top-level entries that fit, then `… N more entries (M files)`. */
function topOnly(top: readonly string[], budget: number): string {
  const shown: string[] = [];
  let used = 0;
  for (let i = 0; i < top.length; i++) {
    const rest = top.slice(i);
    const entries = rest.length === 1 ? '1 more entry' : `${rest.length} more entries`;
    const more = `… ${entries} (${plural(countFiles(rest), 'file')})`;
    const line = top[i] as string;
    if (used + line.length + 1 + more.length + 1 > budget) {
      shown.push(more);
      break;
    }
    shown.push(line);
    used += line.length + 1;
  }
  return fit(shown.join('\n'), budget - 1);
}

/** Files a list of top-level lines stands for (a closed folder line says its count). */
function countFiles(lines: readonly string[]): number {
  return lines.reduce((n, l) => {
    const m = /\/ \((\d+) files?\)$/.exec(l);
    return n + (m === null ? 1 : Number(m[1]));
  }, 0);
}

/** Whole lines of `text` up to `max` characters (only short of all of them with tiny budgets). */
function fit(text: string, max: number): string {
  if (text.length <= max) return text;
  const lines = text.split('\n');
  while (lines.length > 0 && lines.join('\n').length > max) lines.pop();
  return lines.join('\n');
}
