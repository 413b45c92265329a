/**
 * The workspaces of Go and Rust, read from the root's own files: a `go.work` names its
 * modules with `use` directives, a `Cargo.toml` `[workspace]` its member crates with
 * `members` (globs allowed) and `exclude`. Pure: the caller hands in the texts.
 */

/** A path of a workspace file as a folder of the repository: `./a/b/` → `a/b`; none outside it. */
function folderOf(path: string): string | undefined {
  const clean = path
    .trim()
    .replace(/^\.\/+/, '')
    .replace(/\/+$/, '');
  if (clean === '' || clean === '.') return undefined;
  if (clean.startsWith('/') || clean.split('/').includes('..')) return undefined;
  return clean.replace(/\/\.(?=\/|$)/g, '');
}

/** A go.mod path argument: bare, "quoted" or `back-quoted`. */
function unquoteGo(token: string): string {
  const t = token.trim();
  if (/^"(?:[^"\\]|\\.)*"$/.test(t)) {
    try {
      return JSON.parse(t) as string;
    } catch {
      return t.slice(1, -1);
    }
  }
  if (/^`[^`]*`$/.test(t)) return t.slice(1, -1);
  return t;
}

/**
 * The folders a `go.work`'s `use` directives name (`use ./api`, `use ( ./a ./b )`), inside
 * the repository and other than the root, in the file's order.
 */
export function goWorkUses(text: string): string[] {
  const found: string[] = [];
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (line === '') continue;
    if (inBlock) {
      if (line.startsWith(')')) inBlock = false;
      else found.push(unquoteGo(line));
      continue;
    }
    const use = /^use(?:\s+|(?=\())(.*)$/.exec(line);
    if (use === null) continue;
    const rest = (use[1] ?? '').trim();
    if (!rest.startsWith('(')) {
      if (rest !== '') found.push(unquoteGo(rest));
      continue;
    }
    const inner = rest.slice(1).trim();
    if (inner.endsWith(')')) {
      if (inner.length > 1) found.push(unquoteGo(inner.slice(0, -1)));
    } else {
      inBlock = true;
      if (inner !== '') found.push(unquoteGo(inner));
    }
  }
  return [...new Set(found.flatMap((p) => folderOf(p) ?? []))];
}

/** A TOML line without its comment (a `#` outside a string). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

/** The body of a TOML table (`[workspace]`), up to the next table; undefined when absent. */
function tableBody(text: string, table: string): string | undefined {
  const lines = text.split('\n').map(withoutComment);
  const header = new RegExp(`^\\s*\\[${table.replace(/\./g, '\\.')}\\]\\s*$`);
  const start = lines.findIndex((l) => header.test(l));
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && /^\s*\[/.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The strings of a TOML array of strings assigned to `key` in `body`. */
function stringArray(body: string, key: string): string[] {
  const list = new RegExp(`^\\s*${key}\\s*=\\s*\\[([\\s\\S]*?)\\]`, 'm').exec(body)?.[1];
  if (list === undefined) return [];
  const out: string[] = [];
  for (const m of list.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)) {
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? ''));
  }
  return out;
}

/** A Cargo workspace declared in the root's `Cargo.toml`. */
interface CargoWorkspace {
  /** `members` globs (`crates/*`, `tools/cli`), as folders of the repository. */
  readonly members: readonly string[];
  /** `exclude` folders. */
  readonly exclude: readonly string[];
  /** The root is a crate itself (`[package]`), not a virtual manifest. */
  readonly rootPackage: boolean;
}

/** The `[workspace]` of a `Cargo.toml`; undefined when it declares none. */
export function cargoWorkspace(text: string): CargoWorkspace | undefined {
  const body = tableBody(text, 'workspace');
  if (body === undefined) return undefined;
  const folders = (key: string): string[] =>
    stringArray(body, key).flatMap((p) => folderOf(p) ?? []);
  return {
    members: folders('members'),
    exclude: folders('exclude'),
    rootPackage: tableBody(text, 'package') !== undefined,
  };
}
