/**
 * `epicflow watch [--epic ID] [--repo DIR]`: follows an epic run from another terminal.
 * It prints the run's lines as `epicflow run` printed them (from the epic's
 * `events.jsonl`), then every new one as it comes, and ends when no run holds the epic
 * any more (its lock is gone) with the board's counts. Run on an epic nobody runs, it
 * prints what the last run said and ends.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { EngineEvent } from '../../engine/ports.js';
import type { CliContext } from '../context.js';
import { epicFolder } from './epic-folder.js';
import { formatEvent } from './live.js';
import { printable } from './logs.js';

interface WatchCommandOptions {
  readonly epic?: string | undefined;
  readonly repo?: string | undefined;
}

interface WatchHooks {
  /** Between two looks at the events (default: half a second of the wall clock). */
  readonly pause?: () => Promise<void>;
}

/** The lines of `text` from `from` on that are whole (end with a newline), and where they end. */
function wholeLines(text: string, from: number): { lines: string[]; next: number } {
  const end = text.lastIndexOf('\n');
  if (end < from) return { lines: [], next: from };
  return {
    lines: text
      .slice(from, end)
      .split('\n')
      .filter((l) => l.trim() !== ''),
    next: end + 1,
  };
}

function lineOf(json: string): string {
  try {
    return printable(formatEvent(JSON.parse(json) as EngineEvent));
  } catch {
    return `epicflow: (an event that is not JSON: ${printable(json).slice(0, 200)})`;
  }
}

export async function watchCommand(
  opts: WatchCommandOptions,
  io: Pick<CliContext['io'], 'stdout' | 'stderr' | 'cwd'>,
  hooks: WatchHooks = {},
): Promise<number> {
  const found = await epicFolder(io.cwd, opts);
  if (found.kind === 'none') {
    io.stdout(`${found.message}\n`);
    return 0;
  }
  const dir = found.state;
  const events = join(dir, 'events.jsonl');
  const lock = join(dir, 'lock');
  const pause = hooks.pause ?? (() => new Promise<void>((r) => setTimeout(r, 500)));
  let offset = 0;
  let running = existsSync(lock);
  io.stdout(
    running
      ? `epicflow: following the run of epic ${found.epic} (Ctrl-C stops watching, not the run)\n`
      : `epicflow: no run of epic ${found.epic} is active; what its last run said:\n`,
  );
  for (;;) {
    // Whether a run holds the epic is read before the events: its last lines are then in.
    running = existsSync(lock);
    const text = existsSync(events) ? await readFile(events, 'utf8') : '';
    const { lines, next } = wholeLines(text, offset);
    offset = next;
    for (const line of lines) io.stdout(`${lineOf(line)}\n`);
    if (!running) break;
    await pause();
  }
  io.stdout(`epicflow: the run of epic ${found.epic} is not active; see epicflow status\n`);
  return 0;
}

export function registerWatchCommand(program: Command, ctx: CliContext): void {
  program
    .command('watch')
    .description('follow an epic run from another terminal, until it ends')
    .option('--epic <id>', 'the epic (default: the only one that ran here)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .action(async (o: { epic?: string; repo?: string }) => {
      ctx.setExitCode(await watchCommand(o, ctx.io));
    });
}
