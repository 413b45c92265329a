/**
 * A repository of a step's own, for a step in the kernel sandbox whose folder is a linked
 * tree (docs/adr/0025): the sandbox hides the repository's git folder, so the tree's `.git`
 * file would lead nowhere and the agent's `git status`, a setup that asks git for the
 * project's version, or a test that calls git would fail. This makes, in a fresh folder,
 * a git folder that stands where the tree's `.git` file leads:
 *
 * - `HEAD` on the tree's branch (or its detached commit), read from the repository's side
 *   (the tree's admin folder), never from the tree;
 * - a `config` with the repository format alone: no remote, no credential, no hook path,
 *   nothing of the repository's own `config`;
 * - the repository's objects as alternates (seen read-only at their own path in the
 *   sandbox); what the step writes goes to its own object folder;
 * - the repository's branches, tags and remote branches as `packed-refs`, and its
 *   `shallow` file when it is a shallow clone (a job's checkout);
 * - an index of the tree's commit (`read-tree`: git names this folder alone);
 * - the files setup made in the tree (noted in its admin folder when they were set aside
 *   from the story's commits) excluded from its `git status`, as the commits leave them out.
 *
 * epicflow never reads it back: whatever the step writes there (a commit, a ref, a hook, a
 * config) goes with the step's folders.
 */
import { appendFile, lstat, mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { excludePattern } from '../../core/paths.js';
import { adminFolders, headOf, setAsideOf } from './admin-folders.js';
import { canonical } from './listings.js';
import { OBJECT_ID, readObjectFormat } from './objects.js';
import { GitRunner } from './run-git.js';

/** A step's repository, made: where it is, and where the step sees it. */
export interface StepRepository {
  /** The folder made for the step (handed to it with its other folders). */
  readonly folder: string;
  /** Where the tree's `.git` file leads (its admin folder): the folder is seen there. */
  readonly at: string;
  /**
   * The repository's object folder, then those it borrows from (its own alternates, as a
   * `--shared` or `--reference` clone has), each seen read-only at its own path.
   */
  readonly objects: readonly string[];
}

/** The refs a step's repository holds: what a clone of the repository would show. */
const REFS = ['refs/heads', 'refs/tags', 'refs/remotes'];

/**
 * Makes the repository of a step whose folders are `folders` (its tree among them) in
 * `into` (a fresh folder, created here): undefined when none of them is a linked tree of
 * the repository at `gitDir`.
 */
export async function makeStepRepository(
  gitDir: string,
  folders: readonly string[],
  into: string,
): Promise<StepRepository | undefined> {
  const common = await realpath(gitDir).catch(() => null);
  if (common === null) return undefined;
  const trees = new Set(folders.map((f) => canonical(f)));
  const admin = adminFolders(common).find((a) => trees.has(canonical(a.path)))?.admin;
  if (admin === undefined) return undefined;
  const head = headOf(join(admin, 'HEAD'));
  // The repository's own commands, as epicflow runs every git command (hooks off, its
  // configuration from no file outside the repository).
  const repository = new GitRunner(common, undefined, undefined, { gitDir: common });
  const commit =
    head.branch !== undefined
      ? (
          await repository.run(`cannot read ${head.branch} for a step's repository`, [
            'rev-parse',
            '--verify',
            '--end-of-options',
            `${head.branch}^{commit}`,
          ])
        ).trim()
      : head.head;
  if (commit === undefined || !OBJECT_ID.test(commit)) return undefined;
  const format = await readObjectFormat(repository, common);
  const refs = await repository.run(`cannot list the refs of ${common}`, [
    'for-each-ref',
    '--format=%(objectname) %(refname)',
    ...REFS,
  ]);
  const objects = join(common, 'objects');
  await mkdir(into, { recursive: true, mode: 0o700 });
  for (const sub of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info']) {
    await mkdir(join(into, sub), { recursive: true });
  }
  await writeFile(
    join(into, 'HEAD'),
    head.branch !== undefined ? `ref: ${head.branch}\n` : `${commit}\n`,
  );
  await writeFile(
    join(into, 'config'),
    format === 'sha256'
      ? '[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n'
      : '[core]\n\trepositoryformatversion = 0\n\tbare = false\n',
  );
  await writeFile(join(into, 'objects', 'info', 'alternates'), `${objects}\n`);
  await writeFile(join(into, 'packed-refs'), refs);
  // A shallow clone's history ends where its `shallow` file says (without it git would look
  // for the parents of its oldest commits and fail); what the user's `info/exclude`
  // excludes stays excluded.
  for (const file of ['shallow', 'info/exclude']) {
    const bytes = await regularFile(join(common, file));
    if (bytes !== null) await writeFile(join(into, file), bytes);
  }
  // The files setup made in the tree are not the story's: its git leaves them out, as the
  // story's commits do. (A tracked file setup changed stays in its status: the step may
  // change it too, and must see its own change.)
  const patterns = setAsideOf(admin).flatMap((p) => excludePattern(p) ?? []);
  if (patterns.length > 0) {
    await appendFile(join(into, 'info', 'exclude'), `\n${patterns.join('\n')}\n`);
  }
  await new GitRunner(into, undefined, undefined, { gitDir: into }).run(
    `cannot write the index of a step's repository`,
    ['read-tree', commit],
  );
  return { folder: into, at: admin, objects: [objects, ...(await borrowed(objects))] };
}

/** A regular file's bytes (never through a link); null when there is none. */
async function regularFile(path: string): Promise<Buffer | null> {
  const st = await lstat(path).catch(() => null);
  return st?.isFile() === true ? readFile(path) : null;
}

/**
 * The object folders `objects` borrows from, as git follows them: each line of its
 * `info/alternates` (absolute, or relative to it), then theirs, five deep as git goes; those
 * that exist and are object folders (named `objects`, with a `pack` folder: nothing else of
 * the machine is shown for a line that names something else), by their real paths.
 */
async function borrowed(objects: string, depth = 0): Promise<string[]> {
  if (depth >= 5) return [];
  const list = await regularFile(join(objects, 'info', 'alternates'));
  if (list === null) return [];
  const out: string[] = [];
  for (const line of list.toString('utf8').split('\n')) {
    const entry = line.trim();
    if (entry === '' || entry.startsWith('#')) continue;
    const found = await realpath(resolve(objects, entry)).catch(() => null);
    if (found === null || out.includes(found) || basename(found) !== 'objects') continue;
    if ((await lstat(join(found, 'pack')).catch(() => null))?.isDirectory() !== true) continue;
    out.push(found, ...(await borrowed(found, depth + 1)));
  }
  return [...new Set(out)];
}
