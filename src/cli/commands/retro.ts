/**
 * `epicflow retro [--epic ID] [--repo DIR] [--config FILE]`: one read-only model call
 * (an executor with the judge role) over the evidence of the epic's failed and held
 * stories proposes one fix each; the proposal is written to `retro.md` in the epic's
 * state folder with a checkbox per fix, and its path printed. Tick the fixes to apply:
 * the next `epicflow run` of the epic applies the ticked ones and marks them applied.
 * Exit 0 when a proposal was written (or nothing failed), 1 when no proposal came, 2 for
 * usage and config errors.
 */
import type { Command } from 'commander';
import { approvable } from '../../core/retro/index.js';
import { retroLocally, type LocalRetroOptions } from '../../jobs/local/retro-local.js';
import type { CliContext } from '../context.js';
import { roundsUsageLine } from './plan-draft.js';

async function retroCommand(
  opts: LocalRetroOptions,
  io: Pick<CliContext['io'], 'stdout' | 'stderr' | 'cwd' | 'env'>,
): Promise<number> {
  const result = await retroLocally(opts, {
    cwd: io.cwd,
    env: (io.env ?? process.env) as NodeJS.ProcessEnv,
    onEvent: (line) => io.stdout(`retro: ${line}\n`),
    onWarning: (line) => io.stdout(`epicflow: ${line}\n`),
  });
  if (result.kind === 'nothing') {
    io.stdout(`epic ${result.epic}: no story failed or is held; nothing to look back on\n`);
    return 0;
  }
  const n = approvable(result.proposal).length;
  io.stdout(
    [
      `retro: ${n} ${n === 1 ? 'fix' : 'fixes'} proposed by ${result.proposal.executor} for ${result.proposal.subjects.length} failed or held ${result.proposal.subjects.length === 1 ? 'story' : 'stories'}`,
      roundsUsageLine('retro', result.rounds, [result.proposal.executor], result.usage).trimEnd(),
      `proposal: ${result.file}`,
      'tick the fixes you approve there ([x]); the next `epicflow run` of this epic applies them',
      '',
    ].join('\n'),
  );
  return 0;
}

export function registerRetroCommand(program: Command, ctx: CliContext): void {
  program
    .command('retro')
    .description(
      "propose one fix per failed or held story (read-only model call); tick them in the epic's retro.md",
    )
    .option('--epic <id>', 'the epic (default: the only one that ran here)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--config <file>', 'the config file (default: .github/epicflow.yml or epicflow.yml)')
    .option(
      '--agent-user <user>',
      'run the executor as this unprivileged user, as `epicflow run` does (as root the default is epicflow-agent)',
    )
    .option('--no-agent-user', 'as root: run the executor as root (not isolated)')
    .option(
      '--no-sandbox',
      'run agents, setup and gates without the kernel sandbox (bubblewrap): they then see every file your user (or the agent user) can read',
    )
    .action(
      async (o: {
        epic?: string;
        repo?: string;
        config?: string;
        agentUser?: string | false;
        sandbox?: boolean;
      }) => {
        ctx.setExitCode(await retroCommand(o, ctx.io));
      },
    );
}
