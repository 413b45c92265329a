/**
 * `epicflow logs <story> [--epic ID] [--repo DIR] [--all]`: the whole output of a story's
 * steps (setup, each check's gates, each agent turn, the merge), as the run kept them in
 * the epic's state folder, bounded and with executors' secrets redacted. The last
 * attempt's logs by default, every attempt's with `--all`; each under a header naming
 * its file. What agents printed is shown as text: terminal control sequences in it
 * (colours, a title, the clipboard) are removed, never passed to your terminal.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describeError, EpicflowError } from '../../core/errors.js';
import { storyLogsDir } from '../../core/story/index.js';
import { exitCodeFor, type CliContext } from '../context.js';
import { epicFolder } from './epic-folder.js';

interface LogsCommandOptions {
  readonly story: string;
  readonly epic?: string | undefined;
  readonly repo?: string | undefined;
  readonly all?: boolean | undefined;
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

async function logsCommand(
  opts: LogsCommandOptions,
  io: Pick<CliContext['io'], 'stdout' | 'stderr' | 'cwd'>,
): Promise<number> {
  try {
    const found = await epicFolder(io.cwd, opts);
    if (found.kind === 'none') {
      io.stdout(`${found.message}\n`);
      return 0;
    }
    const stateDir = join(found.root, found.epic);
    const logsRoot = join(stateDir, storyLogsDir(''));
    const stories = existsSync(logsRoot)
      ? (await readdir(logsRoot, { withFileTypes: true }))
          .filter((d) => d.isDirectory())
          .map((d) => d.name)
          .sort()
      : [];
    if (!stories.includes(opts.story)) {
      throw new EpicflowError(
        'usage',
        `story "${opts.story}" has no logs in epic "${found.epic}"`,
        {
          details: [
            stories.length > 0
              ? `stories with logs: ${stories.join(', ')}`
              : 'no story of this epic has logs yet',
          ],
        },
      );
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
  } catch (e) {
    io.stderr(`error: ${describeError(e)}\n`);
    return exitCodeFor(e);
  }
}

export function registerLogsCommand(program: Command, ctx: CliContext): void {
  program
    .command('logs')
    .description("print a story's logs: setup, gates, agent turns and merge, whole")
    .argument('<story>', 'the story id')
    .option('--epic <id>', 'the epic (default: the only one that ran here)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--all', 'every attempt, not only the last')
    .action(async (story: string, o: { epic?: string; repo?: string; all?: boolean }) => {
      ctx.setExitCode(await logsCommand({ story, ...o }, ctx.io));
    });
}
