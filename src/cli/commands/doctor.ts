/**
 * `epicflow doctor [--repo DIR] [--config FILE]`: what would stop a local run, all at once —
 * executors without their `${VAR}` keys or their CLI, a setup that needs a lockfile the
 * repository does not commit, no base to start an epic from. One line per finding; exit 1
 * when any is fatal, 0 otherwise, 2 when the config itself is invalid. `epicflow run` makes
 * the same checks before it creates anything.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { findingLines } from '../../core/doctor/index.js';
import { checkLocal } from '../../jobs/local/local-doctor.js';
import { loadLocalConfig, openRepo } from '../../jobs/local/local-config.js';
import { EXIT_FAILED, EXIT_OK, type CliContext } from '../context.js';

interface DoctorOptions {
  readonly repo?: string;
  readonly config?: string;
}

async function doctorCommand(o: DoctorOptions, ctx: CliContext): Promise<number> {
  const { io } = ctx;
  const env = io.env ?? process.env;
  const repo = await openRepo(resolve(io.cwd, o.repo ?? '.'));
  const loaded = await loadLocalConfig({
    root: repo.root,
    config: o.config,
    cwd: io.cwd,
    env,
    deferEnv: true,
  });
  const diagnosis = await checkLocal({
    repo,
    config: loaded.config,
    configFile: loaded.shownFile,
    env,
    detectionNotes: loaded.detectionNotes,
  });
  for (const line of findingLines(diagnosis.findings)) io.stdout(`${line}\n`);
  const fatal = diagnosis.findings.filter((f) => f.level === 'fatal').length;
  const warnings = diagnosis.findings.length - fatal;
  io.stdout(
    diagnosis.findings.length === 0
      ? `ready: ${loaded.config.executors.length} executor(s), setup and base look fine\n`
      : `${fatal} fatal, ${warnings} warning(s)${fatal > 0 ? ': epicflow run would refuse to start' : ''}\n`,
  );
  return fatal > 0 ? EXIT_FAILED : EXIT_OK;
}

export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description(
      'check keys, agent CLIs, lockfile and base before a run; exit 1 on a fatal problem',
    )
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--config <file>', 'config file (default: .github/epicflow.yml or epicflow.yml)')
    .action(async (o: DoctorOptions) => {
      ctx.setExitCode(await doctorCommand(o, ctx));
    });
}
