/**
 * The files of a repository's root that detection (`core/init`) looks at: their names,
 * and the texts of those it reads. Reads the working tree as it is (committed or not).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { wantsFile, wantsText } from '../../core/init/index.js';

interface RootFiles {
  readonly paths: readonly string[];
  readonly texts: ReadonlyMap<string, string>;
}

/** The root's files detection looks at (a symbolic link counts as the file it names). */
export async function readRootFiles(dir: string): Promise<RootFiles> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && wantsFile(e.name))
    .map((e) => e.name)
    .sort();
  const texts = new Map<string, string>();
  for (const name of names.filter(wantsText)) {
    texts.set(name, await readFile(join(dir, name), 'utf8'));
  }
  return { paths: names, texts };
}
