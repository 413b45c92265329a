/**
 * The files package detection (`core/init` `detectPackages`) looks at: every file of the
 * repository as git lists it (tracked, or untracked and not ignored; never a file under
 * `node_modules/`), and the texts of the root's workspace files and of the packages'
 * files detection reads. Reads the working tree as it is (committed or not).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GitRunner } from '../git/run-git.js';
import { isEpicflowError } from '../../core/errors.js';
import { packageTextPaths, WORKSPACE_FILES } from '../../core/init/index.js';

interface PackageFiles {
  /** Every file of the repository, relative to its root; none outside a git repository. */
  readonly paths: readonly string[];
  /** The texts detection reads, by path. */
  readonly texts: ReadonlyMap<string, string>;
}

/** The repository's files as git lists them in `dir`; empty when it is no git repository. */
async function listRepoFiles(dir: string): Promise<string[]> {
  let out;
  try {
    out = await new GitRunner(dir, undefined).try([
      'ls-files',
      '-z',
      '--cached',
      '--others',
      '--exclude-standard',
      // An untracked node_modules is never walked, ignored or not.
      '--exclude=node_modules/',
      '--full-name',
    ]);
  } catch (e) {
    if (isEpicflowError(e, 'git')) return [];
    throw e;
  }
  if (out.exitCode !== 0) return [];
  return [
    ...new Set(
      out.stdout.split('\0').filter((p) => p !== '' && !p.split('/').includes('node_modules')),
    ),
  ].sort();
}

async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // Listed by git, gone from the tree (deleted, not yet committed): not there.
    if (code === 'ENOENT' || code === 'EISDIR') return undefined;
    throw e;
  }
}

/** What `detectPackages` needs of the repository rooted at `dir`. */
export async function readPackageFiles(dir: string): Promise<PackageFiles> {
  const paths = await listRepoFiles(dir);
  const texts = new Map<string, string>();
  // Listed by git, gone from the tree (deleted, not yet committed).
  const gone = new Set<string>();
  const readAll = async (list: readonly string[]): Promise<void> => {
    for (const path of list) {
      const text = await readIfThere(join(dir, path));
      if (text === undefined) gone.add(path);
      else texts.set(path, text);
    }
  };
  await readAll(WORKSPACE_FILES.filter((name) => paths.includes(name)));
  await readAll(packageTextPaths(paths, texts));
  // Root files count as listed; a package's listed file gone from the tree does not.
  return { paths: paths.filter((p) => !p.includes('/') || !gone.has(p)), texts };
}
