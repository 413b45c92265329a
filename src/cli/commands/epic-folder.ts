/**
 * Which epic a command that reads a local run means: `--epic ID`, else the only
 * epic that ran in the repository. Its state folder is `.git/epicflow/<epic>`.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Git } from '../../adapters/git/index.js';
import { checkEpicId } from '../../composition/local.js';
import { EpicflowError } from '../../core/errors.js';

/** The epics that ran in a repository: the folders of `<git dir>/epicflow` with an `epic.json`. */
export async function epicsIn(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const names = await readdir(dir);
  return names.filter((n) => existsSync(join(dir, n, 'epic.json'))).sort();
}

/** The repository `--repo` names (default: the current directory), or a usage error. */
export async function openRepo(cwd: string, repoOption: string | undefined): Promise<Git> {
  const dir = resolve(cwd, repoOption ?? '.');
  try {
    return await Git.open(dir);
  } catch {
    throw new EpicflowError('usage', `not a git repository: ${dir}`);
  }
}

export type EpicFolder =
  | { readonly kind: 'found'; readonly repo: Git; readonly root: string; readonly epic: string }
  /** Nothing to pick from, or more than one: what to tell the user (not an error). */
  | { readonly kind: 'none'; readonly message: string };

export async function epicFolder(
  cwd: string,
  opts: { readonly repo?: string | undefined; readonly epic?: string | undefined },
): Promise<EpicFolder> {
  const repo = await openRepo(cwd, opts.repo);
  const root = join(repo.gitDir, 'epicflow');
  const epics = await epicsIn(root);
  if (opts.epic !== undefined) {
    checkEpicId(opts.epic, '--epic');
    if (!epics.includes(opts.epic)) {
      throw new EpicflowError('usage', `no epic "${opts.epic}" has run in this repository`, {
        details: epics.length > 0 ? [`known epics: ${epics.join(', ')}`] : [],
      });
    }
    return { kind: 'found', repo, root, epic: opts.epic };
  }
  if (epics.length === 0) {
    return { kind: 'none', message: 'no epic has run in this repository yet' };
  }
  if (epics.length > 1) {
    return {
      kind: 'none',
      message: `epics in this repository: ${epics.join(', ')} (pick one with --epic ID)`,
    };
  }
  return { kind: 'found', repo, root, epic: epics[0] as string };
}
