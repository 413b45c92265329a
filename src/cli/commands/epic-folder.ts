/**
 * Which epic a command that reads a local run means, and its repository: `--repo`
 * (default: the current directory) and `--epic ID`, else the only epic that ran there.
 * Its state folder is `<git dir>/epicflow/<epic>` (`epicStateDir`).
 */
import { resolve } from 'node:path';
import type { Git } from '../../adapters/git/index.js';
import { openRepo as openRepoAt } from '../../jobs/local/local-config.js';
import { chooseEpic, epicStateDir } from '../../jobs/local/local-epics.js';

/** The repository `--repo` names (default: the current directory), or a usage error. */
export function openRepo(cwd: string, repoOption: string | undefined): Promise<Git> {
  return openRepoAt(resolve(cwd, repoOption ?? '.'));
}

type EpicFolder =
  | {
      readonly kind: 'found';
      readonly repo: Git;
      readonly epic: string;
      /** The epic's state folder. */
      readonly state: string;
    }
  /** Nothing to pick from, or more than one: what to tell the user (not an error). */
  | { readonly kind: 'none'; readonly message: string };

export async function epicFolder(
  cwd: string,
  opts: { readonly repo?: string | undefined; readonly epic?: string | undefined },
): Promise<EpicFolder> {
  const repo = await openRepo(cwd, opts.repo);
  const choice = await chooseEpic(repo, opts.epic);
  if (choice.kind === 'found') {
    return { kind: 'found', repo, epic: choice.epic, state: epicStateDir(repo, choice.epic) };
  }
  return {
    kind: 'none',
    message:
      choice.kind === 'none'
        ? 'no epic has run in this repository yet'
        : `epics in this repository: ${choice.epics.join(', ')} (pick one with --epic ID)`,
  };
}
