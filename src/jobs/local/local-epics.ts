/**
 * The epics that ran in a repository, locally: one state folder each under
 * `<git dir>/epicflow/<epic>`, known by its `epic.json`; and which one a command that
 * reads a local run means (`--epic ID`, else the only one). One place for every command.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import type { Git } from '../../adapters/git/index.js';
import { EpicflowError } from '../../core/errors.js';
import { SAVED_EPIC_FILE } from '../../engine/status.js';

/** `--epic` ids and plan base names become branch names and folder names. */
const EPIC_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkEpicId(id: string, from: string): string {
  if (!EPIC_ID.test(id) || id.endsWith('.lock') || id.includes('..')) {
    throw new EpicflowError('usage', `invalid epic id ${JSON.stringify(id)} (${from})`, {
      details: ['use letters, digits, ".", "_" and "-" (at most 64), or pass --epic ID'],
    });
  }
  return id;
}

/** The epic a plan file runs as: `--epic ID`, else the file's base name; checked either way. */
export function epicOfPlan(planPath: string, given: string | undefined): string {
  return checkEpicId(
    given ?? basename(planPath, extname(planPath)),
    given === undefined ? `from the plan file name ${basename(planPath)}` : '--epic',
  );
}

/** The folder under `.git` holding each epic's state. */
export function epicsRoot(repo: Git): string {
  return join(repo.gitDir, 'epicflow');
}

/** One epic's state folder: records, events, reports, the lock (`<git dir>/epicflow/<epic>`). */
export function epicStateDir(repo: Git, epic: string): string {
  return join(epicsRoot(repo), epic);
}

/** Where planning commands (plan draft, plan refine, plan approve's split) keep their scratch checkouts. */
export function planningRoot(repo: Git): string {
  return join(epicsRoot(repo), 'planning');
}

/** Where one epic's things are kept locally. */
export interface EpicFolders {
  readonly epic: string;
  /** Its state: records, events, reports, the lock (`<git dir>/epicflow/<epic>`). */
  readonly state: string;
  /** Its worktrees (`<git dir>/epicflow/worktrees/<epic>`, unless `--worktrees DIR`). */
  readonly worktrees: string;
  /** The executors' isolated homes. */
  readonly homes: string;
  /** The agent user's home, when untrusted code runs as one. */
  readonly agentHome: string;
  /** The setup cache the repository's epics share (`<git dir>/epicflow/cache/setup`). */
  readonly setupCache: string;
}

/** The folders of `epic`; `worktrees` is a `--worktrees DIR` already resolved. */
export function epicFolders(repo: Git, epic: string, worktrees?: string): EpicFolders {
  const state = epicStateDir(repo, epic);
  return {
    epic,
    state,
    worktrees:
      worktrees === undefined ? join(epicsRoot(repo), 'worktrees', epic) : resolve(worktrees),
    homes: join(state, 'homes'),
    agentHome: join(state, 'agent-home'),
    setupCache: join(epicsRoot(repo), 'cache', 'setup'),
  };
}

/** Epics that ran in this repository (a state folder with `epic.json`), sorted. */
export async function localEpics(repo: Git): Promise<string[]> {
  const root = epicsRoot(repo);
  if (!existsSync(root)) return [];
  const names = await readdir(root);
  return names.filter((n) => existsSync(join(epicStateDir(repo, n), SAVED_EPIC_FILE))).sort();
}

type EpicChoice =
  | { readonly kind: 'found'; readonly epic: string }
  /** None ran yet, or several did and none was named. */
  | { readonly kind: 'none' | 'several'; readonly epics: readonly string[] };

/** `--epic` (a usage error when no such epic ran), else the only epic of the repository. */
export async function chooseEpic(repo: Git, given: string | undefined): Promise<EpicChoice> {
  const epics = await localEpics(repo);
  if (given !== undefined) {
    checkEpicId(given, '--epic');
    if (!epics.includes(given)) {
      throw new EpicflowError('usage', `no epic "${given}" has run in this repository`, {
        details: epics.length > 0 ? [`known epics: ${epics.join(', ')}`] : [],
      });
    }
    return { kind: 'found', epic: given };
  }
  if (epics.length === 1) return { kind: 'found', epic: epics[0] as string };
  return { kind: epics.length === 0 ? 'none' : 'several', epics };
}

/** `--epic`, or the only epic of the repository; anything else is a usage error naming the choices. */
export async function pickEpic(repo: Git, given: string | undefined): Promise<string> {
  const choice = await chooseEpic(repo, given);
  if (choice.kind === 'found') return choice.epic;
  if (choice.kind === 'none') {
    throw new EpicflowError('usage', `no epic has run in ${repo.root} yet`, {
      details: ['deliver one first: epicflow run PLAN.md'],
    });
  }
  throw new EpicflowError('usage', `${choice.epics.length} epics ran in this repository`, {
    details: [`pick one with --epic ID: ${choice.epics.join(', ')}`],
  });
}
