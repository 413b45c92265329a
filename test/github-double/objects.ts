/**
 * The double's writes as git objects made in its own process: blobs, trees and commits
 * hashed (SHA-1 over `<type> <size>\0<bytes>`) and stored as loose objects, zlib-deflated in
 * `objects/xx/…`, as `git hash-object -w`, `write-tree` and `commit-tree` store them. A
 * REST commit then starts one git process (the ref's compare-and-swap) instead of six.
 *
 * What is written is what git's plumbing wrote from a temporary index: the base tree with
 * the changes applied in order (a file replaces a folder of the same path and the other way
 * round, as `update-index --index-info` does), every folder on a changed path written again
 * from its entries (in git's order, file modes as the index keeps them, folders left without
 * files dropped) and every other folder kept as it was. Where git itself judges the input
 * (a path it would ignore or refuse, an unusual tree or identity, settings from the
 * environment), the writer throws `AskGit` and the caller runs git's plumbing instead.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';

/** The input is one for git's own plumbing to judge; nothing observable was changed. */
export class AskGit extends Error {}

export type TreeChange =
  | { readonly path: string; readonly remove: true }
  | { readonly path: string; readonly mode: string; readonly sha: string };

export interface Person {
  readonly name: string;
  readonly email: string;
}

type ReadObject = (sha: string) => Promise<{ type: string; content: Buffer } | undefined>;

interface Leaf {
  readonly kind: 'leaf';
  readonly mode: string;
  readonly sha: string;
}
interface Folder {
  readonly kind: 'tree';
  /** The tree it was read from; undefined for a folder the changes made. */
  readonly sha: string | undefined;
  /** Its entries once a change walked into it (then it is written again). */
  entries: Entries | undefined;
}
/** Entry names are bytes, held as latin1 strings (one character a byte). */
type Entries = Map<string, Leaf | Folder>;

const FULL_SHA = /^[0-9a-f]{40}$/;
/** The modes git writes in a tree: file, executable, symlink, submodule, folder. */
const MODES = new Set(['100644', '100755', '120000', '160000', '40000']);
/** Names git ignores or refuses in a path (`verify_path`, with core.protectNTFS on). */
const BAD_NAME = /^(?:\.{0,2}|(?:\.git|git~1)[. ]*)$|[\\/\0]/i;
/** What git strips from both ends of an identity's name and email (`crud` in ident.c). */
const CRUD = /^[\0- .,:;<>"\\']|[\0- .,:;<>"\\']$|[\0\n<>]/;
/** Message bytes git refuses or rewrites (a NUL; non-characters fail its UTF-8 check). */
const ODD_MESSAGE = /[\0\uFDD0-\uFDEF\uFFFE\uFFFF]/;
/** Variables that make git's plumbing write elsewhere or otherwise. */
const GIT_VARIABLES = [
  'GIT_DIR',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_DATE',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
];

/** Whether git's plumbing, run now, would read settings this writer does not follow. */
function environmentAsksGit(): boolean {
  const env = process.env;
  if (GIT_VARIABLES.some((v) => env[v] !== undefined)) return true;
  // Attributes (hash-object applies them to the temp files it hashes).
  const config = env['XDG_CONFIG_HOME'] ?? join(env['HOME'] ?? '/', '.config');
  return existsSync('/etc/gitattributes') || existsSync(join(config, 'git', 'attributes'));
}

/** A path's names as latin1 strings of its UTF-8 bytes; `AskGit` when git would not take it. */
function namesOf(path: string): string[] {
  const names = Buffer.from(path, 'utf8').toString('latin1').split('/');
  if (names.some((n) => BAD_NAME.test(n))) throw new AskGit(`path ${path}`);
  return names;
}

/** Git's tree order: names compared as bytes, a folder's as if it ended with `/`. */
function compareEntries(a: string, aFolder: boolean, b: string, bFolder: boolean): number {
  const len = Math.min(a.length, b.length);
  for (let i = 0; i < len; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  const end = (s: string, folder: boolean): number =>
    s.length > len ? s.charCodeAt(len) : folder ? 0x2f : 0;
  return end(a, aFolder) - end(b, bFolder);
}

function* treeEntries(body: Buffer): Generator<{ mode: string; name: string; sha: string }> {
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = space < 0 ? -1 : body.indexOf(0, space);
    if (nul < 0 || nul + 21 > body.length) throw new AskGit('a malformed tree');
    yield {
      mode: body.toString('latin1', at, space),
      name: body.toString('latin1', space + 1, nul),
      sha: body.toString('hex', nul + 1, nul + 21),
    };
    at = nul + 21;
  }
}

function timestamp(): string {
  const seconds = Math.floor(Date.now() / 1000);
  const offset = -new Date(seconds * 1000).getTimezoneOffset();
  const abs = Math.abs(offset);
  const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `${seconds} ${zone}`;
}

/** Writes one repository's objects; reads its trees through `read`. */
export class ObjectWriter {
  /** Whether a tree holds a file somewhere below it (trees never change: kept). */
  private readonly withFiles = new Map<string, Promise<boolean>>();
  private format: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly read: ReadObject,
  ) {}

  /** Throws `AskGit` when git's plumbing must do the write; an error when it cannot be done. */
  async ready(): Promise<void> {
    this.format ??= readFile(join(this.dir, 'config'), 'utf8').then((config) => {
      const format = /^\s*objectformat\s*=\s*(\S+)/im.exec(config)?.[1];
      if (format !== undefined && format.toLowerCase() !== 'sha1') {
        throw new Error(
          `github-double: ${this.dir} stores ${format} objects; the double writes sha1 only`,
        );
      }
    });
    await this.format;
    if (environmentAsksGit()) throw new AskGit('settings from the environment');
  }

  /** Stores an object (left alone when it is there already) and returns its name. */
  async write(type: string, body: Buffer, known?: string): Promise<string> {
    const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
    const sha = createHash('sha1').update(raw).digest('hex');
    if (sha === known) return sha;
    const folder = join(this.dir, 'objects', sha.slice(0, 2));
    const file = join(folder, sha.slice(2));
    if (existsSync(file)) return sha;
    await mkdir(folder, { recursive: true });
    // As git does: a temp file in the same folder, linked to its name (an object that
    // another writer linked first is the same bytes), then the temp file removed.
    const temp = join(folder, `tmp_obj_${randomBytes(6).toString('hex')}`);
    await writeFile(temp, deflateSync(raw, { level: 1 }), { mode: 0o444, flag: 'wx' });
    try {
      await link(temp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await unlink(temp);
    }
    return sha;
  }

  blob(content: string | Buffer): Promise<string> {
    return this.write('blob', Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'));
  }

  /** `base` (a full tree name, or none) with `changes` applied in order; the new tree's name. */
  async tree(base: string | undefined, changes: readonly TreeChange[]): Promise<string> {
    // Nothing changed: git writes the base tree back as it is (or the empty tree).
    if (changes.length === 0) return base ?? this.write('tree', Buffer.alloc(0));
    const root: Folder = { kind: 'tree', sha: base, entries: undefined };
    for (const change of changes) {
      const names = namesOf(change.path);
      const last = names.pop() ?? '';
      let entries: Entries | undefined = await this.opened(root);
      for (const name of names) {
        const e: Leaf | Folder | undefined = entries.get(name);
        if (e?.kind === 'tree') entries = await this.opened(e);
        else if ('remove' in change) {
          entries = undefined;
          break;
        } else {
          const made: Entries = new Map();
          entries.set(name, { kind: 'tree', sha: undefined, entries: made });
          entries = made;
        }
      }
      if (entries === undefined) continue;
      if (!('remove' in change)) {
        if (!FULL_SHA.test(change.sha) || !/^100(644|755)$/.test(change.mode))
          throw new AskGit(`entry ${change.mode} ${change.sha}`);
        entries.set(last, { kind: 'leaf', mode: change.mode, sha: change.sha });
      } else if (entries.get(last)?.kind === 'tree') {
        throw new AskGit(`a folder removed as a path: ${change.path}`);
      } else entries.delete(last);
    }
    return (await this.saved(root, true)) ?? '';
  }

  /** A commit object (`commit-tree`): `who` as author and committer, the time now. */
  async commit(
    tree: string,
    parents: readonly string[],
    message: string,
    who: Person,
  ): Promise<string> {
    const names = [tree, ...parents];
    if (!names.every((n) => FULL_SHA.test(n)) || new Set(names).size !== names.length)
      throw new AskGit('object names');
    if ([who.name, who.email].some((s) => s.length === 0 || CRUD.test(s)))
      throw new AskGit('an identity git would clean');
    if (ODD_MESSAGE.test(message)) throw new AskGit('a message git would refuse or rewrite');
    const ident = `${who.name} <${who.email}> ${timestamp()}`;
    const head = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`)];
    const text = `${head.join('\n')}\nauthor ${ident}\ncommitter ${ident}\n\n${message}`;
    return this.write('commit', Buffer.from(text, 'utf8'));
  }

  /** A folder's entries, read from its tree the first time. */
  private async opened(folder: Folder): Promise<Entries> {
    if (folder.entries !== undefined) return folder.entries;
    const entries: Entries = new Map();
    if (folder.sha !== undefined) {
      const found = await this.read(folder.sha);
      if (found?.type !== 'tree') throw new AskGit(`tree ${folder.sha}`);
      for (const { mode, name, sha } of treeEntries(found.content)) {
        // Unusual entries are git's to judge: modes it would rewrite, names it would refuse.
        if (!MODES.has(mode) || BAD_NAME.test(name) || entries.has(name))
          throw new AskGit(`tree ${folder.sha}`);
        if (mode === '120000' && /^\.|~/.test(name)) throw new AskGit(`tree ${folder.sha}`);
        entries.set(
          name,
          mode === '40000'
            ? { kind: 'tree', sha, entries: undefined }
            : { kind: 'leaf', mode, sha },
        );
      }
    }
    folder.entries = entries;
    return entries;
  }

  /** Writes a folder that changes walked into; undefined when no file is left below it. */
  private async saved(folder: Folder, root = false): Promise<string | undefined> {
    const rows: { name: string; mode: string; sha: string }[] = [];
    for (const [name, e] of folder.entries ?? []) {
      let sha: string | undefined = e.sha;
      if (e.kind === 'tree') {
        if (e.entries !== undefined) sha = await this.saved(e);
        else if (e.sha === undefined || !(await this.holdsFiles(e.sha))) sha = undefined;
      }
      if (sha !== undefined) rows.push({ name, mode: e.kind === 'tree' ? '40000' : e.mode, sha });
    }
    if (rows.length === 0 && !root) return undefined;
    rows.sort((a, b) => compareEntries(a.name, a.mode === '40000', b.name, b.mode === '40000'));
    const body = Buffer.concat(
      rows.flatMap((r) => [
        Buffer.from(`${r.mode} ${r.name}\0`, 'latin1'),
        Buffer.from(r.sha, 'hex'),
      ]),
    );
    return this.write('tree', body, folder.sha);
  }

  /**
   * Whether an untouched folder keeps its place: git writes a changed folder from the index,
   * where a tree with no file anywhere below it has no entry.
   */
  private holdsFiles(sha: string): Promise<boolean> {
    let known = this.withFiles.get(sha);
    if (known === undefined) {
      known = (async () => {
        const found = await this.read(sha);
        if (found?.type !== 'tree') throw new AskGit(`tree ${sha}`);
        const folders: string[] = [];
        for (const { mode, sha: sub } of treeEntries(found.content)) {
          if ((parseInt(mode, 8) & 0o170000) !== 0o040000) return true;
          folders.push(sub);
        }
        for (const sub of folders) if (await this.holdsFiles(sub)) return true;
        return false;
      })();
      this.withFiles.set(sha, known);
      known.catch(() => this.withFiles.delete(sha));
    }
    return known;
  }
}
