/**
 * The repository's files that detection (`core/init` `withDetected`) reads, from the
 * working tree (the local commands: the user's own checkout, committed or not), or from
 * a commit's git objects (a job on GitHub: the commit it works on). A commit is read
 * from git's objects only: a symbolic link is no file there and is never followed, a
 * submodule is not entered, so nothing of a tree an agent wrote is read through.
 */
import type { Git } from '../git/git.js';
import {
  packageTextPaths,
  wantsText,
  WORKSPACE_FILES,
  type DetectionFiles,
} from '../../core/init/index.js';
import { readPackageFiles } from './package-files.js';
import { readRootFiles } from './root-files.js';

/** The working tree's files detection reads. */
export async function treeDetectionFiles(dir: string): Promise<DetectionFiles> {
  const root = await readRootFiles(dir);
  const repo = await readPackageFiles(dir);
  // The root's files as the folder holds them now (as `init` reads them); the rest as git lists them.
  return {
    paths: [...root.paths, ...repo.paths.filter((p) => p.includes('/'))].sort(),
    texts: new Map([...repo.texts, ...root.texts]),
  };
}

/** Regular files (executable or not) of a tree: no link, no submodule. */
const FILE_MODES = new Set(['100644', '100755']);

/** The files detection reads in `commit`, from git's objects. */
export async function commitDetectionFiles(
  git: Pick<Git, 'treeFiles' | 'readBlobs'>,
  commit: string,
): Promise<DetectionFiles> {
  const objects = new Map(
    (await git.treeFiles(commit))
      .filter((e) => FILE_MODES.has(e.mode) && !e.path.split('/').includes('node_modules'))
      .map((e) => [e.path, e.object] as const),
  );
  const paths = [...objects.keys()].sort();
  const texts = new Map<string, string>();
  const readAll = async (list: readonly string[]): Promise<void> => {
    const wanted = list.flatMap((p) => {
      const object = objects.get(p);
      return object === undefined ? [] : [[p, object] as const];
    });
    const blobs = await git.readBlobs(wanted.map(([, object]) => object));
    const decoder = new TextDecoder();
    for (const [path, object] of wanted) {
      const blob = blobs.get(object);
      if (blob !== undefined) texts.set(path, decoder.decode(blob));
    }
  };
  const root = paths.filter((p) => !p.includes('/'));
  await readAll(
    root.filter((p) => wantsText(p) || (WORKSPACE_FILES as readonly string[]).includes(p)),
  );
  await readAll(packageTextPaths(paths, texts));
  return { paths, texts };
}
