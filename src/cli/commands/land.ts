/**
 * `epicflow land [--epic ID] [--into BRANCH]`: bring BRANCH into a finished
 * epic (a coder resolves conflicts and red gates, at most three rounds), then
 * merge the epic into BRANCH. Exit 0 landed, 1 not landed (nothing moved),
 * 2 usage error or unmerged stories.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { landLocalEpic } from '../../jobs/local/land-local.js';
import { cleanEpic, cleanLines } from '../../jobs/local/local-clean.js';
import { openRepo } from '../../jobs/local/local-config.js';
import type { CliContext } from '../context.js';
import { roundsUsageLine } from './plan-draft.js';
import { formatEvent } from './run.js';
import { onInterrupt } from '../../adapters/process/interrupt.js';

export interface LandCommandOptions {
  readonly epic?: string;
  readonly into?: string;
  readonly repo?: string;
  readonly config?: string;
  readonly agentUser?: string | false;
  /** `--no-sandbox`: untrusted code runs without the kernel sandbox. */
  readonly sandbox?: boolean;
}

interface LandCommandIo {
  stdout(s: string): void;
  stderr(s: string): void;
  readonly cwd: string;
}

/** Test hooks; never set by the CLI itself. */
interface LandCommandHooks {
  readonly env?: NodeJS.ProcessEnv;
  /** After the epic branch moved, before the branch landed in does. */
  readonly beforeInto?: () => void | Promise<void>;
}

const short = (sha: string | undefined): string => (sha ?? '').slice(0, 12);

export async function landCommand(
  opts: LandCommandOptions,
  io: LandCommandIo,
  hooks: LandCommandHooks = {},
): Promise<number> {
  const interrupt = onInterrupt({
    say: (name) => io.stderr(`epicflow: ${name}: stopping the landing; nothing moves\n`),
    secondQuits: false,
  });
  try {
    const result = await landLocalEpic(opts, {
      cwd: io.cwd,
      env: hooks.env ?? process.env,
      onEvent: (event) => io.stdout(`${formatEvent(event)}\n`),
      interrupt: interrupt.signal,
      beforeInto: hooks.beforeInto,
      onWarning: (line) => io.stdout(`epicflow: ${line}\n`),
    });
    const r = result.record;
    const lines: string[] = [];
    if (r.outcome === 'landed') {
      lines.push(`epicflow: landed ${result.epicBranch} in ${result.into}`);
      if (r.epicHeadAfter !== undefined) {
        const how =
          r.rounds === 0
            ? 'merged cleanly, gates green'
            : `resolved in ${r.rounds} ${r.rounds === 1 ? 'round' : 'rounds'}`;
        lines.push(
          `  ${result.epicBranch}: merged ${result.into} (${short(r.intoHeadBefore)}) at ${short(r.epicHeadAfter)} (${how})`,
        );
      }
      if (r.intoHeadAfter !== r.intoHeadBefore) {
        lines.push(
          `  ${result.into}: merged ${result.epicBranch} (--no-ff) at ${short(r.intoHeadAfter)}` +
            (result.checkout === null ? '' : `; the checkout in ${result.checkout} follows`),
        );
      } else {
        lines.push(`  ${result.into} already contains ${result.epicBranch}: nothing moved`);
      }
    } else {
      lines.push(`epicflow: not landed: ${r.reason ?? 'unknown reason'}`);
      if (r.conflicts.length > 0) lines.push(`  conflicting paths: ${r.conflicts.join(', ')}`);
      if (r.failingGates.length > 0) lines.push(`  failing gates: ${r.failingGates.join(', ')}`);
      lines.push(
        `  nothing moved: ${result.epicBranch} is still at ${short(r.epicHeadBefore)}, ${result.into} at ${short(r.intoHeadBefore)}`,
      );
      if (r.nextStep !== undefined) lines.push(`next: ${r.nextStep}`);
    }
    if (r.outcome === 'landed') {
      // What it landed needs its worktrees and story branches no more.
      const repo = await openRepo(resolve(io.cwd, opts.repo ?? '.'));
      for (const line of cleanLines(await cleanEpic(repo, result.epic, { force: false }))) {
        lines.push(`  ${line}`);
      }
    }
    if (r.rounds > 0 || r.usage.length > 0) {
      lines.push(roundsUsageLine('coder', r.rounds, r.executors, r.usage).trimEnd());
    }
    lines.push(`record: ${result.file}`, '');
    io.stdout(lines.join('\n'));
    return result.exitCode;
  } finally {
    interrupt.release();
  }
}

/** `epicflow land`. */
export function registerLandCommand(program: Command, ctx: CliContext): void {
  program
    .command('land')
    .description(
      'bring a branch into a finished epic (a coder fixes conflicts and red gates, at most 3 rounds), then merge the epic into it',
    )
    .addHelpText(
      'after',
      [
        '',
        'Exit codes:',
        '  0  landed',
        '  1  not landed: the epic branch and the branch are where they were',
        '  2  usage error, or a story of the plan is not done',
      ].join('\n'),
    )
    .option('--epic <id>', 'the epic (default: the only one that ran in this repository)')
    .option('--into <branch>', 'the branch to land in (default: the one checked out)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--config <file>', 'config file (default: .github/epicflow.yml or epicflow.yml)')
    .option(
      '--agent-user <user>',
      'run the coder, setup and gates as this unprivileged user (needs root or passwordless sudo; as root the default is epicflow-agent)',
    )
    .option('--no-agent-user', 'as root: run the coder, setup and gates as root (not isolated)')
    .option(
      '--no-sandbox',
      'run agents, setup and gates without the kernel sandbox (bubblewrap): they then see every file your user (or the agent user) can read',
    )
    .action(
      async (o: {
        epic?: string;
        into?: string;
        repo?: string;
        config?: string;
        agentUser?: string | false;
        sandbox?: boolean;
      }) => {
        const code = await landCommand(
          {
            ...(o.epic !== undefined && { epic: o.epic }),
            ...(o.into !== undefined && { into: o.into }),
            ...(o.repo !== undefined && { repo: o.repo }),
            ...(o.config !== undefined && { config: o.config }),
            ...(o.agentUser !== undefined && { agentUser: o.agentUser }),
            ...(o.sandbox === false && { sandbox: false }),
          },
          { stdout: (s) => ctx.io.stdout(s), stderr: (s) => ctx.io.stderr(s), cwd: ctx.io.cwd },
          ctx.io.env === undefined ? {} : { env: ctx.io.env as NodeJS.ProcessEnv },
        );
        ctx.setExitCode(code);
      },
    );
}
