/**
 * `epicflow status [--epic ID] [--repo DIR]`: the board of an epic run in this
 * repository, rebuilt from its records and the epic branch.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FileStateStore } from '../../adapters/state/file-store.js';
import { describeError, EpicflowError } from '../../core/errors.js';
import { exitCodeFor } from '../context.js';
import { gitPort } from '../../adapters/git/port.js';
import { checkEpicId } from '../../composition/local.js';
import { Git } from '../../adapters/git/index.js';
import { renderEpicBoard } from '../../engine/status.js';
import { storyLogsDir } from '../../core/story/index.js';

export interface StatusCommandOptions {
  readonly epic?: string;
  readonly repo?: string;
}

export interface StatusCommandIo {
  stdout(s: string): void;
  stderr(s: string): void;
  readonly cwd: string;
  readonly isTTY: boolean;
}

async function epicsIn(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const names = await readdir(dir);
  return names.filter((n) => existsSync(join(dir, n, 'epic.json'))).sort();
}

/** One line per story that has logs: where the whole output of its setup, gates and turns is. */
async function logLines(stateDir: string): Promise<string> {
  const dir = join(stateDir, storyLogsDir(''));
  if (!existsSync(dir)) return '';
  const stories = (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  if (stories.length === 0) return '';
  const width = Math.max(...stories.map((s) => s.length));
  return `\nLogs (setup, gates and agent turns, whole):\n${stories
    .map((s) => `  ${s.padEnd(width)}  ${join(stateDir, storyLogsDir(s))}/\n`)
    .join('')}`;
}

export async function statusCommand(
  opts: StatusCommandOptions,
  io: StatusCommandIo,
): Promise<number> {
  try {
    const dir = resolve(io.cwd, opts.repo ?? '.');
    let repo: Git;
    try {
      repo = await Git.open(dir);
    } catch {
      throw new EpicflowError('usage', `not a git repository: ${dir}`);
    }
    const root = join(repo.gitDir, 'epicflow');
    const epics = await epicsIn(root);
    let epic = opts.epic;
    if (epic !== undefined) {
      checkEpicId(epic, '--epic');
      if (!epics.includes(epic)) {
        throw new EpicflowError('usage', `no epic "${epic}" has run in this repository`, {
          details: epics.length > 0 ? [`known epics: ${epics.join(', ')}`] : [],
        });
      }
    } else if (epics.length === 0) {
      io.stdout('no epic has run in this repository yet\n');
      return 0;
    } else if (epics.length > 1) {
      io.stdout(`epics in this repository: ${epics.join(', ')} (pick one with --epic ID)\n`);
      return 0;
    } else {
      epic = epics[0] as string;
    }
    const board = await renderEpicBoard(new FileStateStore(join(root, epic)), gitPort(repo), {
      now: () => new Date(),
    });
    io.stdout(board ?? `no board for epic "${epic}" yet\n`);
    io.stdout(await logLines(join(root, epic)));
    return 0;
  } catch (e) {
    io.stderr(`error: ${describeError(e)}\n`);
    return exitCodeFor(e);
  }
}
