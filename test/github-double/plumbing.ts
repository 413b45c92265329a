/**
 * The double's git writes through git's own plumbing, from a temporary index: `read-tree`,
 * `hash-object`, `update-index`, `write-tree`, `commit-tree`. The object writer
 * (`objects.ts`) does the same in the double's process; these run where git itself must
 * judge the input (see `AskGit`), and are what the writer is tested against.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnVia } from './spawner.js';

export interface GitResult {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export interface Identity {
  readonly name: string;
  readonly email: string;
}

/** Identity and config that make the double's git independent of the machine's settings. */
export const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
};

export async function runGit(
  dir: string,
  args: readonly string[],
  options: { input?: Buffer | string; env?: Record<string, string> } = {},
): Promise<GitResult> {
  const r = await spawnVia({
    command: 'git',
    args,
    cwd: dir,
    env: { ...process.env, ...GIT_ENV, ...options.env },
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

export async function git(
  dir: string,
  args: readonly string[],
  options: { input?: Buffer | string; env?: Record<string, string> } = {},
): Promise<string> {
  const r = await runGit(dir, args, options);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout.toString('utf8').trim();
}

export function identityEnv(
  author: Identity,
  committer: Identity = author,
): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
}

/** Index changes in one `update-index -z --index-info` (mode 0 removes a path). */
async function updateIndex(
  dir: string,
  env: Record<string, string>,
  entries: readonly (
    { path: string; remove: true } | { path: string; mode: string; sha: string }
  )[],
): Promise<void> {
  if (entries.length === 0) return;
  const zero = '0'.repeat(40);
  const input = entries
    .map((e) => ('remove' in e ? `0 ${zero}\t${e.path}` : `${e.mode} ${e.sha}\t${e.path}`))
    .join('\0');
  await git(dir, ['update-index', '-z', '--index-info'], { env, input: input + '\0' });
}

/**
 * Writes blobs and returns their shas in order: one `hash-object` for one blob, one
 * `hash-object --stdin-paths` over temp files (in `scratch`) for more.
 */
async function writeBlobs(
  dir: string,
  scratch: string,
  contents: readonly (string | Buffer)[],
): Promise<string[]> {
  if (contents.length === 0) return [];
  const [only] = contents;
  if (contents.length === 1 && only !== undefined) {
    return [await git(dir, ['hash-object', '-w', '--stdin'], { input: only })];
  }
  const tmp = await mkdtemp(join(scratch, 'blobs-'));
  try {
    const paths = await Promise.all(
      contents.map(async (c, i) => {
        const file = join(tmp, String(i));
        await writeFile(file, c);
        return file;
      }),
    );
    const out = await git(dir, ['hash-object', '-w', '--stdin-paths'], {
      input: paths.join('\n') + '\n',
    });
    return out.split('\n');
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function indexFile(scratch: string): string {
  return join(scratch, `index-${process.pid}-${Math.random().toString(36).slice(2)}`);
}

/** `GitStore.writeTree` through git's plumbing. */
export async function writeTreeWithGit(
  dir: string,
  scratch: string,
  base: string | undefined,
  entries: readonly { path: string; mode: string; content?: string; sha?: string | null }[],
): Promise<string> {
  const index = indexFile(scratch);
  const env = { GIT_INDEX_FILE: index };
  try {
    if (base) await git(dir, ['read-tree', base], { env });
    const written = await writeBlobs(
      dir,
      scratch,
      entries.flatMap((e) => (e.sha !== null && e.content !== undefined ? [e.content] : [])),
    );
    let next = 0;
    await updateIndex(
      dir,
      env,
      entries.map((e) => {
        if (e.sha === null) return { path: e.path, remove: true };
        const blob = e.content !== undefined ? (written[next++] ?? '') : (e.sha ?? '');
        return { path: e.path, mode: e.mode, sha: blob };
      }),
    );
    return await git(dir, ['write-tree'], { env });
  } finally {
    await rm(index, { force: true });
  }
}

/** `GitStore.commitFiles` through git's plumbing, without moving a ref. */
export async function commitFilesWithGit(
  dir: string,
  scratch: string,
  parent: string | null,
  files: Record<string, string | Buffer | null>,
  message: string,
  who: Identity,
): Promise<{ commit: string; blobs: Record<string, string> }> {
  const kept = Object.entries(files).filter((e): e is [string, string | Buffer] => e[1] !== null);
  const shas = await writeBlobs(
    dir,
    scratch,
    kept.map(([, content]) => content),
  );
  const blobs: Record<string, string> = {};
  kept.forEach(([path], i) => {
    blobs[path] = shas[i] ?? '';
  });
  const tree = await writeTreeWithGit(
    dir,
    scratch,
    parent ?? undefined,
    Object.entries(files).map(([path, content]) =>
      content === null
        ? { path, mode: '100644', sha: null }
        : { path, mode: '100644', sha: blobs[path] ?? '' },
    ),
  );
  const commit = await commitTreeWithGit(dir, tree, parent ? [parent] : [], message, who);
  return { commit, blobs };
}

/** `GitStore.commitTree` through git's plumbing. */
export function commitTreeWithGit(
  dir: string,
  tree: string,
  parents: readonly string[],
  message: string,
  who: Identity,
): Promise<string> {
  return git(dir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'], {
    env: identityEnv(who),
    input: message,
  });
}
