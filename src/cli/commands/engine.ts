import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from '../context.js';
import { parseExecutorIds } from '../../core/roster/select.js';
import { runCommand } from './run.js';
import { statusCommand } from './status.js';

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a whole number of at least 1');
  }
  return n;
}

function engineIo(ctx: CliContext): Parameters<typeof runCommand>[1] {
  return {
    stdout: (s) => ctx.io.stdout(s),
    stderr: (s) => ctx.io.stderr(s),
    cwd: ctx.io.cwd,
    isTTY: ctx.io.isTTY ?? false,
  };
}

/** `epicflow run` and `epicflow status`. */
export function registerEngineCommands(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description('deliver the epic of a plan file locally; rerun to resume')
    .argument('<file>', 'markdown file holding the ```epicflow block')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--config <file>', 'config file (default: .github/epicflow.yml or epicflow.yml)')
    .option('--epic <id>', "the epic's id (default: the plan file's base name)")
    .option('--concurrency <n>', 'stories in flight (default: config concurrency)', positiveInteger)
    .option('--fail-fast', 'stop launching stories after the first failure')
    .option(
      '--deferred',
      'once every story is done: one follow-up round over the findings the judge deferred (judge.deferNonBlocking)',
    )
    .option(
      '--executors <ids>',
      'this run uses only these executors (comma-separated ids of the roster)',
      parseExecutorIds,
    )
    .option('--worktrees <dir>', 'where story worktrees go (default: inside the git folder)')
    .option(
      '--agent-user <user>',
      'run agents, setup and gates as this unprivileged user (needs root or passwordless sudo; as root the default is epicflow-agent)',
    )
    .option('--no-agent-user', 'as root: run agents, setup and gates as root (not isolated)')
    .option(
      '--no-sandbox',
      'run agents, setup and gates without the kernel sandbox (bubblewrap): they then see every file your user (or the agent user) can read',
    )
    .action(
      async (
        file: string,
        o: {
          repo?: string;
          config?: string;
          epic?: string;
          concurrency?: number;
          failFast?: boolean;
          deferred?: boolean;
          worktrees?: string;
          agentUser?: string | false;
          sandbox?: boolean;
          executors?: string[];
        },
      ) => {
        const code = await runCommand(
          {
            file,
            ...(o.repo !== undefined && { repo: o.repo }),
            ...(o.config !== undefined && { config: o.config }),
            ...(o.epic !== undefined && { epic: o.epic }),
            ...(o.concurrency !== undefined && { concurrency: o.concurrency }),
            ...(o.failFast === true && { failFast: true }),
            ...(o.deferred === true && { deferred: true }),
            ...(o.worktrees !== undefined && { worktrees: o.worktrees }),
            ...(o.agentUser !== undefined && { agentUser: o.agentUser }),
            ...(o.sandbox === false && { sandbox: false }),
            ...(o.executors !== undefined && { executors: o.executors }),
          },
          engineIo(ctx),
          ctx.io.env === undefined ? {} : { env: ctx.io.env as NodeJS.ProcessEnv },
        );
        ctx.setExitCode(code);
      },
    );

  program
    .command('status')
    .description('show the board of an epic in this repository')
    .option('--epic <id>', 'the epic (default: the only one, or the latest)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--json', 'print the report.json document of the epic instead')
    .option('--list', 'list every epic of the repository: stories merged, where it stands, title')
    .action(async (o: { epic?: string; repo?: string; json?: boolean; list?: boolean }) => {
      const code = await statusCommand(
        {
          ...(o.epic !== undefined && { epic: o.epic }),
          ...(o.repo !== undefined && { repo: o.repo }),
          ...(o.json === true && { json: true }),
          ...(o.list === true && { list: true }),
        },
        engineIo(ctx),
      );
      ctx.setExitCode(code);
    });
}
