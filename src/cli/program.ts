import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { registerCleanCommand } from './commands/clean.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerEngineCommands } from './commands/engine.js';
import { registerInitCommand } from './commands/init.js';
import { registerLandCommand } from './commands/land.js';
import { registerLogsCommand } from './commands/logs.js';
import { registerPlanCommands } from './commands/plan.js';
import { registerRetroCommand } from './commands/retro.js';
import { registerRosterCommands } from './commands/roster.js';
import { registerWatchCommand } from './commands/watch.js';
import { EXIT_OK, EXIT_USAGE, renderFailure } from './context.js';
import type { CliContext, CliIo } from './context.js';

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  // The same relative path works from src/cli (tsx, tests) and lib/cli (the build).
  const pkg = require('../../package.json') as { version: string };
  return pkg.version;
}

/** Builds the command tree. New commands register here, one module each. */
function buildProgram(ctx: CliContext): Command {
  const program = new Command('epicflow')
    .description('deliver an epic of dependent stories with AI coding agents')
    .version(packageVersion())
    // Commander would call process.exit; we turn its exits into return codes.
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.io.stdout(s),
      writeErr: (s) => ctx.io.stderr(s),
    })
    .showHelpAfterError('(run with --help for usage)');
  registerPlanCommands(program, ctx);
  registerEngineCommands(program, ctx);
  registerLogsCommand(program, ctx);
  registerWatchCommand(program, ctx);
  registerRetroCommand(program, ctx);
  registerLandCommand(program, ctx);
  registerRosterCommands(program, ctx);
  registerInitCommand(program, ctx);
  registerDoctorCommand(program, ctx);
  registerCleanCommand(program, ctx);
  return program;
}

/**
 * Runs the CLI on `argv` (the arguments after the program name) and returns the
 * exit code: 0 success, 1 a failed check or run, 2 a usage error.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode = EXIT_OK;
  const ctx: CliContext = { io, setExitCode: (code) => (exitCode = code) };
  try {
    await buildProgram(ctx).parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (e) {
    // Commander has already printed its message (help, version or the usage error).
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    return renderFailure(io, e);
  }
}
