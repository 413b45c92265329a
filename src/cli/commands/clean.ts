/**
 * `epicflow clean [--epic ID] [--force] [--repo DIR]`: removes an epic's worktrees and its
 * story branches merged into the epic branch; an unmerged story branch (and its worktree)
 * is kept, saying why, unless `--force`. The epic branch and its records stay. Exit 0, or
 * 2 for a usage error.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { pickEpic } from '../../jobs/local/local-epics.js';
import { cleanEpic, cleanLines } from '../../jobs/local/local-clean.js';
import { openRepo } from '../../jobs/local/local-config.js';
import { EXIT_OK, type CliContext } from '../context.js';

interface CleanOptions {
  readonly epic?: string;
  readonly force?: boolean;
  readonly repo?: string;
}

async function cleanCommand(o: CleanOptions, ctx: CliContext): Promise<number> {
  const repo = await openRepo(resolve(ctx.io.cwd, o.repo ?? '.'));
  const epic = await pickEpic(repo, o.epic);
  const outcome = await cleanEpic(repo, epic, { force: o.force === true });
  const lines = cleanLines(outcome);
  if (lines.length === 0) lines.push(`nothing to clean for epic ${epic}`);
  ctx.io.stdout(`${lines.join('\n')}\n`);
  return EXIT_OK;
}

export function registerCleanCommand(program: Command, ctx: CliContext): void {
  program
    .command('clean')
    .description("remove an epic's worktrees and merged story branches")
    .option('--epic <id>', 'the epic (default: the only one)')
    .option('--force', 'also delete story branches not merged into the epic (their work is lost)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .action(async (o: CleanOptions) => {
      ctx.setExitCode(await cleanCommand(o, ctx));
    });
}
