/**
 * `epicflow logs <story> [--epic ID] [--repo DIR] [--all]`: the whole output of a story's
 * steps (setup, each check's gates, each agent turn, the merge), as the run kept them in
 * the epic's state folder, bounded and with executors' secrets redacted. The last
 * attempt's logs by default, every attempt's with `--all`; each under a header naming
 * its file. What agents printed is shown as text: terminal control sequences in it
 * (colours, a title, the clipboard) are removed, never passed to your terminal.
 * `--follow`: while a run holds the epic, what the story's current step prints, as it
 * comes (its `live.log`), until the run ends.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { EpicflowError } from '../../core/errors.js';
import { liveLogName, storyLogsDir } from '../../core/story/index.js';
import { FileStateStore } from '../../adapters/state/file-store.js';
import { readSavedEpic } from '../../engine/status.js';
import type { CliContext } from '../context.js';
import { epicFolder } from './epic-folder.js';

interface LogsCommandOptions {
  readonly story: string;
  readonly epic?: string | undefined;
  readonly repo?: string | undefined;
  readonly all?: boolean | undefined;
  readonly follow?: boolean | undefined;
}

interface LogsHooks {
  /** Between two looks at the live log (default: a quarter of a second of the wall clock). */
  readonly pause?: () => Promise<void>;
}

const LOG_FILE = /^(\d+)-(\d+)-([a-z]+)\.log$/;

/** Escape sequences (CSI, OSC, and the rest) and other control characters but tab and newline. */
const ESCAPES =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|[\x00-\x08\x0b-\x1f\x7f\x9b\x9d]/g;

/** Text an agent printed, safe for a terminal. */
export function printable(text: string): string {
  return text.replace(ESCAPES, '');
}

interface LogFile {
  readonly name: string;
  readonly attempt: number;
  readonly n: number;
}

/**
 * Prints the story's live log from its start, then what is appended, until no run holds
 * the epic; a log started anew (the story's next attempt) is printed from its start.
 */
async function follow(
  store: FileStateStore,
  story: string,
  io: Pick<CliContext['io'], 'stdout'>,
  pause: () => Promise<void>,
): Promise<void> {
  const path = join(store.dir, liveLogName(story));
  let offset = 0;
  let partial = '';
  for (;;) {
    // Whether a run holds the epic is read before the log: its last lines are then in.
    const running = await store.lockHeld();
    const text = existsSync(path) ? await readFile(path, 'utf8') : '';
    if (text.length < offset) {
      offset = 0;
      partial = '';
    }
    const fresh = partial + text.slice(offset);
    offset = text.length;
    const end = fresh.lastIndexOf('\n');
    if (end >= 0) io.stdout(printable(fresh.slice(0, end + 1)));
    partial = fresh.slice(end + 1);
    if (!running) break;
    await pause();
  }
  if (partial !== '') io.stdout(`${printable(partial)}\n`);
}

async function logsCommand(
  opts: LogsCommandOptions,
  io: Pick<CliContext['io'], 'stdout' | 'stderr' | 'cwd'>,
  hooks: LogsHooks = {},
): Promise<number> {
  const found = await epicFolder(io.cwd, opts);
  if (found.kind === 'none') {
    io.stdout(`${found.message}\n`);
    return 0;
  }
  const stateDir = found.state;
  if (opts.follow === true) {
    const store = new FileStateStore(stateDir);
    const saved = await readSavedEpic(store);
    const planned = saved?.plan.stories.map((s) => s.id) ?? [];
    if (!planned.includes(opts.story)) {
      throw new EpicflowError(
        'usage',
        `story "${opts.story}" is not in the plan of epic "${found.epic}"`,
        { details: [`its stories: ${planned.join(', ')}`] },
      );
    }
    if (await store.lockHeld()) {
      io.stdout(
        `epicflow: following story ${opts.story} of epic ${found.epic} until the run ends (Ctrl-C stops following, not the run)\n`,
      );
      const pause = hooks.pause ?? (() => new Promise<void>((r) => setTimeout(r, 250)));
      await follow(store, opts.story, io, pause);
      io.stdout(
        `epicflow: the run of epic ${found.epic} ended; epicflow logs ${opts.story} prints its logs\n`,
      );
      return 0;
    }
    io.stdout(`epicflow: no run of epic ${found.epic} is active; the story's last logs:\n`);
  }
  const logsRoot = join(stateDir, storyLogsDir(''));
  const stories = existsSync(logsRoot)
    ? (await readdir(logsRoot, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  if (!stories.includes(opts.story)) {
    throw new EpicflowError('usage', `story "${opts.story}" has no logs in epic "${found.epic}"`, {
      details: [
        stories.length > 0
          ? `stories with logs: ${stories.join(', ')}`
          : 'no story of this epic has logs yet',
      ],
    });
  }
  const dir = join(stateDir, storyLogsDir(opts.story));
  const files: LogFile[] = [];
  for (const name of await readdir(dir)) {
    const m = LOG_FILE.exec(name);
    if (m !== null) files.push({ name, attempt: Number(m[1]), n: Number(m[2]) });
  }
  files.sort((a, b) => a.attempt - b.attempt || a.n - b.n);
  const last = files[files.length - 1]?.attempt;
  const shown = opts.all === true ? files : files.filter((f) => f.attempt === last);
  for (const [i, f] of shown.entries()) {
    const text = printable(await readFile(join(dir, f.name), 'utf8'));
    io.stdout(`${i === 0 ? '' : '\n'}==> ${join(dir, f.name)} <==\n`);
    io.stdout(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  }
  return 0;
}

export function registerLogsCommand(program: Command, ctx: CliContext): void {
  program
    .command('logs')
    .description("print a story's logs: setup, gates, agent turns and merge, whole")
    .argument('<story>', 'the story id')
    .option('--epic <id>', 'the epic (default: the only one that ran here)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--all', 'every attempt, not only the last')
    .option('-f, --follow', 'while a run holds the epic: what the story prints now, as it comes')
    .action(
      async (
        story: string,
        o: { epic?: string; repo?: string; all?: boolean; follow?: boolean },
      ) => {
        ctx.setExitCode(await logsCommand({ story, ...o }, ctx.io));
      },
    );
}
