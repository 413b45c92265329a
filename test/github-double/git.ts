/**
 * Real git behind the double: bare repositories, their objects written by the double
 * (`objects.ts`) and their refs moved by `git update-ref`, served over smart HTTP by
 * git-http-backend (CGI), so clones, fetches and pushes travel real HTTP and the REST API
 * reads refs and files from the same repositories.
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommitInfo } from './fixtures.js';
import { CatFile, type CatFileObject } from './cat-file.js';
import { AskGit, ObjectWriter, type TreeChange } from './objects.js';
import {
  commitFilesWithGit,
  commitTreeWithGit,
  git,
  GIT_ENV,
  runGit,
  writeTreeWithGit,
  type Identity,
} from './plumbing.js';
import { spawnVia } from './spawner.js';

export { runGit, type GitResult, type Identity } from './plumbing.js';

/** A full object name: what is read by it never changes. */
const FULL_SHA = /^[0-9a-f]{40}$/;
/** Objects remembered by name (types, commits, trees, small blobs), oldest forgotten first. */
const MAX_REMEMBERED = 50_000;
const MAX_REMEMBERED_BLOB = 256 * 1024;

export class GitStore {
  /**
   * Reads by full object name, remembered: git objects are immutable, so a commit, tree or
   * blob read once is the same next time (only found objects are kept: a missing one may be
   * written later). Spares a git process per object on the GraphQL and REST read paths.
   */
  private readonly objects = new Map<string, unknown>();

  /** One `git cat-file --batch-command` per repository, for reads by name. */
  private readonly readers = new Map<string, CatFile>();

  /** Per repository: writes objects in this process (`objects.ts`). */
  private readonly writers = new Map<string, ObjectWriter>();

  private constructor(readonly root: string) {}

  private reader(dir: string): CatFile {
    let r = this.readers.get(dir);
    if (r === undefined) {
      r = new CatFile(dir, { ...process.env, ...GIT_ENV });
      this.readers.set(dir, r);
    }
    return r;
  }

  /** The object `name` resolves to (as `git rev-parse` resolves it), with its bytes when asked. */
  private async lookUp(
    dir: string,
    name: string,
    withContent = false,
  ): Promise<CatFileObject | undefined> {
    const r = this.reader(dir);
    return withContent ? r.contents(name) : r.info(name);
  }

  private async remembered<T>(
    kind: string,
    dir: string,
    sha: string,
    read: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    if (!FULL_SHA.test(sha)) return read();
    const key = `${kind}\0${dir}\0${sha}`;
    if (this.objects.has(key)) return this.objects.get(key) as T;
    const value = await read();
    if (value === undefined) return value;
    if (Buffer.isBuffer(value) && value.length > MAX_REMEMBERED_BLOB) return value;
    if (this.objects.size >= MAX_REMEMBERED) {
      const oldest = this.objects.keys().next().value;
      if (oldest !== undefined) this.objects.delete(oldest);
    }
    this.objects.set(key, value);
    return value;
  }

  static async create(): Promise<GitStore> {
    return new GitStore(await mkdtemp(join(tmpdir(), 'github-double-')));
  }

  async dispose(): Promise<void> {
    for (const r of this.readers.values()) r.close();
    this.readers.clear();
    await rm(this.root, { recursive: true, force: true });
  }

  dirOf(owner: string, name: string): string {
    return join(this.root, owner, `${name}.git`);
  }

  /** A bare repository with one commit on `defaultBranch` holding `files`. */
  async init(
    owner: string,
    name: string,
    defaultBranch: string,
    files: Record<string, string>,
    who: Identity,
  ): Promise<string> {
    const dir = this.dirOf(owner, name);
    await git(this.root, ['init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`, dir]);
    // Pushes over HTTP are allowed for authenticated users (REMOTE_USER is set by the double).
    // What `git config http.receivepack true` writes, without a process for it.
    await appendFile(join(dir, 'config'), '[http]\n\treceivepack = true\n');
    const all = Object.keys(files).length === 0 ? { 'README.md': `# ${name}\n` } : files;
    await this.commitFiles(dir, null, all, 'Initial commit', who, `refs/heads/${defaultBranch}`);
    return dir;
  }

  async resolveRef(dir: string, ref: string): Promise<string | undefined> {
    return (await this.lookUp(dir, `${ref}^{commit}`))?.sha;
  }

  /** The object `rev` names (`<sha>`, `<ref>^{tree}`, `<rev>:<path>`…), when it exists. */
  async revParse(dir: string, rev: string): Promise<string | undefined> {
    return (await this.lookUp(dir, rev))?.sha;
  }

  /** Refs under `prefix` (e.g. `refs/heads/epic/`), sorted by name. */
  async listRefs(dir: string, prefix: string): Promise<{ ref: string; sha: string }[]> {
    const out = await git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', prefix]);
    return out
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => {
        const [ref = '', sha = ''] = l.split(' ');
        return { ref, sha };
      });
  }

  /** Compare-and-swap a ref: `old` null means "must not exist", undefined means "any". */
  async updateRef(dir: string, ref: string, sha: string, old?: string | null): Promise<boolean> {
    const args = ['update-ref', ref, sha];
    if (old === null) args.push('0'.repeat(40));
    else if (old !== undefined) args.push(old);
    return (await runGit(dir, args)).code === 0;
  }

  async deleteRef(dir: string, ref: string): Promise<void> {
    await git(dir, ['update-ref', '-d', ref]);
  }

  async objectType(dir: string, sha: string): Promise<string | undefined> {
    return this.remembered('type', dir, sha, async () => (await this.lookUp(dir, sha))?.type);
  }

  /** `git rev-list <args>`: the commits named, one sha each. */
  async revList(dir: string, args: readonly string[]): Promise<string[]> {
    return (await git(dir, ['rev-list', ...args])).split('\n').filter((l) => l.length > 0);
  }

  async isAncestor(dir: string, ancestor: string, of: string): Promise<boolean> {
    return (await runGit(dir, ['merge-base', '--is-ancestor', ancestor, of])).code === 0;
  }

  async readCommit(dir: string, sha: string): Promise<CommitInfo | undefined> {
    return this.remembered('commit', dir, sha, () => this.readCommitNow(dir, sha));
  }

  private async readCommitNow(dir: string, sha: string): Promise<CommitInfo | undefined> {
    const found = await this.lookUp(dir, sha, true);
    if (found?.type !== 'commit') return undefined;
    const text = found.content.toString('utf8');
    const split = text.indexOf('\n\n');
    const head = text.slice(0, split).split('\n');
    const message = text.slice(split + 2);
    let tree = '';
    const parents: string[] = [];
    const people: Record<string, { name: string; email: string; date: string }> = {};
    for (const line of head) {
      const [key, ...rest] = line.split(' ');
      const value = rest.join(' ');
      if (key === 'tree') tree = value;
      else if (key === 'parent') parents.push(value);
      else if (key === 'author' || key === 'committer') {
        const m = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/.exec(value);
        if (m) {
          people[key] = {
            name: m[1] ?? '',
            email: m[2] ?? '',
            date: new Date(Number(m[3]) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          };
        }
      }
    }
    const nobody = { name: '', email: '', date: new Date(0).toISOString() };
    return {
      sha,
      tree,
      parents,
      message,
      author: people['author'] ?? nobody,
      committer: people['committer'] ?? nobody,
    };
  }

  /** The blob at `path` in `commit`, or undefined. */
  async readFile(
    dir: string,
    commit: string,
    path: string,
  ): Promise<{ sha: string; content: Buffer } | undefined> {
    const found = await this.lookUp(dir, `${commit}:${path}`, true);
    return found?.type === 'blob' ? { sha: found.sha, content: found.content } : undefined;
  }

  async listTree(
    dir: string,
    treeish: string,
    recursive: boolean,
  ): Promise<
    { mode: string; type: string; sha: string; size: number | undefined; path: string }[]
  > {
    const list = await this.remembered(recursive ? 'tree-r' : 'tree', dir, treeish, async () => {
      const args = ['ls-tree', '--long', ...(recursive ? ['-r', '-t'] : []), treeish];
      const r = await runGit(dir, args);
      return r.code === 0 ? r.stdout : undefined;
    });
    if (list === undefined) return [];
    return list
      .toString('utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => {
        const [meta = '', path = ''] = l.split('\t');
        const [mode = '', type = '', sha = '', size = '-'] = meta.split(/\s+/);
        return { mode, type, sha, size: size === '-' ? undefined : Number(size), path };
      });
  }

  /** A blob's bytes by sha, or undefined when there is no such blob. */
  async readBlob(dir: string, sha: string): Promise<Buffer | undefined> {
    if ((await this.objectType(dir, sha)) !== 'blob') return undefined;
    return this.remembered('blob', dir, sha, async () => {
      const found = await this.lookUp(dir, sha, true);
      return found?.type === 'blob' ? found.content : undefined;
    });
  }

  /**
   * Runs `write` with the repository's object writer; undefined when the input is for git's
   * own plumbing to judge (`AskGit`), so the caller runs that instead.
   */
  private async inProcess<T>(
    dir: string,
    write: (w: ObjectWriter) => Promise<T>,
  ): Promise<T | undefined> {
    let w = this.writers.get(dir);
    if (w === undefined) {
      w = new ObjectWriter(dir, (sha) => this.lookUp(dir, sha, true));
      this.writers.set(dir, w);
    }
    try {
      await w.ready();
      return await write(w);
    } catch (e) {
      if (e instanceof AskGit) return undefined;
      throw e;
    }
  }

  /**
   * A tree like `POST /git/trees`: `base` (a tree sha) with blob entries replaced
   * (`content` is written as a new blob, `sha` names an existing one, `sha: null`
   * deletes the path). Returns the new tree's sha.
   */
  async writeTree(
    dir: string,
    base: string | undefined,
    entries: readonly { path: string; mode: string; content?: string; sha?: string | null }[],
  ): Promise<string> {
    const written = await this.inProcess(dir, async (w) => {
      if (base && !FULL_SHA.test(base)) throw new AskGit(`base ${base}`);
      const changes: TreeChange[] = [];
      for (const e of entries) {
        if (e.sha === null) changes.push({ path: e.path, remove: true });
        else {
          const sha = e.content !== undefined ? await w.blob(e.content) : (e.sha ?? '');
          changes.push({ path: e.path, mode: e.mode, sha });
        }
      }
      return w.tree(base || undefined, changes);
    });
    return written ?? writeTreeWithGit(dir, this.root, base, entries);
  }

  /** A commit of `tree` with `parents` (`POST /git/commits`); no ref moves. */
  async commitTree(
    dir: string,
    tree: string,
    parents: readonly string[],
    message: string,
    who: Identity,
  ): Promise<string> {
    const written = await this.inProcess(dir, (w) => w.commit(tree, parents, message, who));
    return written ?? commitTreeWithGit(dir, tree, parents, message, who);
  }

  /**
   * Write a commit on top of `parent` replacing `files` (null content deletes a path).
   * When `ref` is given the ref moves from `parent` to the new commit (compare-and-swap);
   * undefined when it moved meanwhile.
   */
  async commitFiles(
    dir: string,
    parent: string | null,
    files: Record<string, string | Buffer | null>,
    message: string,
    who: Identity,
    ref?: string,
  ): Promise<{ commit: string; blobs: Record<string, string> } | undefined> {
    const made =
      (await this.inProcess(dir, async (w) => {
        const base = parent ? (await this.readCommit(dir, parent))?.tree : undefined;
        if (parent && base === undefined) throw new AskGit(`parent ${parent}`);
        const blobs: Record<string, string> = {};
        const changes: TreeChange[] = [];
        for (const [path, content] of Object.entries(files)) {
          if (content === null) changes.push({ path, remove: true });
          else {
            const sha = await w.blob(content);
            blobs[path] = sha;
            changes.push({ path, mode: '100644', sha });
          }
        }
        const tree = await w.tree(base, changes);
        return { commit: await w.commit(tree, parent ? [parent] : [], message, who), blobs };
      })) ?? (await commitFilesWithGit(dir, this.root, parent, files, message, who));
    if (ref && !(await this.updateRef(dir, ref, made.commit, parent))) return undefined;
    return made;
  }

  /**
   * Server-side merge like `POST /merges`: a merge commit of `head` into `base`, or
   * 'conflict'. Uses `git merge-tree --write-tree` (git ≥ 2.38), no work tree needed.
   */
  async mergeCommit(
    dir: string,
    base: string,
    head: string,
    message: string,
    who: Identity,
  ): Promise<string | 'conflict'> {
    const r = await runGit(dir, ['merge-tree', '--write-tree', base, head]);
    if (r.code === 1) return 'conflict';
    if (r.code !== 0) throw new Error(`git merge-tree failed: ${r.stderr.trim()}`);
    const tree = r.stdout.toString('utf8').split('\n')[0]?.trim() ?? '';
    return this.commitTree(dir, tree, [base, head], message, who);
  }

  /** Whether `head` merges into `base` without a conflict (GitHub's `mergeable`). */
  async mergesCleanly(dir: string, base: string, head: string): Promise<boolean> {
    const r = await runGit(dir, ['merge-tree', '--write-tree', base, head]);
    if (r.code !== 0 && r.code !== 1) throw new Error(`git merge-tree failed: ${r.stderr.trim()}`);
    return r.code === 0;
  }

  /**
   * Serve one smart-HTTP request through git-http-backend (CGI): the request's body in,
   * its header lines and body out.
   */
  async serveHttp(
    req: IncomingMessage,
    res: ServerResponse,
    pathInfo: string,
    query: string,
    remoteUser: string,
    /** The request's body, when the caller has read it already. */
    read?: Buffer,
  ): Promise<void> {
    const env: Record<string, string> = {
      ...GIT_ENV,
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: this.root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: pathInfo,
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: query,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: remoteUser,
      REMOTE_ADDR: '127.0.0.1',
      GATEWAY_INTERFACE: 'CGI/1.1',
    };
    const length = req.headers['content-length'];
    if (typeof length === 'string') env['CONTENT_LENGTH'] = length;
    const encoding = req.headers['content-encoding'];
    if (typeof encoding === 'string') env['HTTP_CONTENT_ENCODING'] = encoding;
    const protocol = req.headers['git-protocol'];
    if (typeof protocol === 'string') env['GIT_PROTOCOL'] = protocol;
    // `git http-backend` would only start git-http-backend with these two set: start it directly.
    const exec = await execPath(env);
    env['GIT_EXEC_PATH'] = exec;
    env['PATH'] = `${exec}:${env['PATH'] ?? ''}`;
    const r = await spawnVia({
      command: join(exec, 'git-http-backend'),
      args: [],
      env,
      input: read ?? (await bodyOf(req)),
    });
    const end = r.stdout.indexOf('\r\n\r\n');
    if (end < 0) {
      res.statusCode = 500;
      res.end(r.stdout);
      return;
    }
    let status = 200;
    for (const line of r.stdout.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else res.setHeader(name, value);
    }
    res.statusCode = status;
    res.end(r.stdout.subarray(end + 4));
  }
}

let gitExecPath: Promise<string> | undefined;

/** Where git's programs are (`git --exec-path`), asked once per process. */
function execPath(env: Record<string, string>): Promise<string> {
  gitExecPath ??= spawnVia({ command: 'git', args: ['--exec-path'], env }).then((r) => {
    if (r.code !== 0) throw new Error(`git --exec-path failed: ${r.stderr.toString('utf8')}`);
    return r.stdout.toString('utf8').trim();
  });
  return gitExecPath;
}

/** A request's whole body. */
export async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const body: Buffer[] = [];
  for await (const chunk of req) body.push(chunk as Buffer);
  return Buffer.concat(body);
}
