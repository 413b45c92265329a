import type { Command } from 'commander';
import { parsePlan } from '../../core/plan/index.js';
import type { PlanResult } from '../../core/plan/index.js';
import { approveSplitsFromCli } from '../../jobs/local/split-local.js';
import { EXIT_FAILED, EXIT_OK } from '../context.js';
import type { CliContext } from '../context.js';
import { readInput } from '../read-input.js';
import { planDraftCommand } from './plan-draft.js';
import { planRefineCommand } from './plan-refine.js';
import { planCheckText } from './plan-text.js';

/** `epicflow plan check FILE|- [--json]`, `plan draft EPIC.md` and `plan approve PLAN.md [STORY]`. */
/** `plan draft`'s options as commander gives them (`plan refine`'s but `--out`). */
interface DraftFlags {
  readonly out?: string;
  readonly repo?: string;
  readonly config?: string;
  readonly agentUser?: string | false;
  readonly sandbox?: boolean;
}

/** The planner's isolation flags (`plan draft`, `plan refine`), as `epicflow run` has its agent's. */
function plannerIsolation(command: Command): Command {
  return command
    .option(
      '--agent-user <user>',
      'run the planner as this unprivileged user, as `epicflow run` runs its agents (as root the default is epicflow-agent)',
    )
    .option('--no-agent-user', 'as root: run the planner as root (not isolated)')
    .option(
      '--no-sandbox',
      'run the planner without the kernel sandbox (bubblewrap): it then sees every file your user (or the agent user) can read',
    );
}

/** The isolation flags as the local job takes them: only what was given. */
function isolationOf(o: Pick<DraftFlags, 'agentUser' | 'sandbox'>): {
  agentUser?: string | false;
  sandbox?: false;
} {
  return {
    ...(o.agentUser !== undefined && { agentUser: o.agentUser }),
    ...(o.sandbox === false && { sandbox: false }),
  };
}

export function registerPlanCommands(program: Command, ctx: CliContext): void {
  const plan = program.command('plan').description('work with plan files');
  plan
    .command('check')
    .description('parse and validate a plan; exit 0 when valid, 1 when not')
    .argument('<file>', 'markdown file holding the ```epicflow block, or - for stdin')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const markdown = await readInput(file, ctx.io);
      // Workflow protection uses the defaults here: `plan check` reads no config.
      const result = parsePlan(markdown);
      ctx.io.stdout(
        options.json ? `${JSON.stringify(planCheckJson(result))}\n` : planCheckText(result),
      );
      ctx.setExitCode(result.ok ? EXIT_OK : EXIT_FAILED);
    });
  plannerIsolation(
    plan
      .command('draft')
      .description("let the planner turn an epic's prose into a validated plan")
      .argument('<epic>', 'markdown file describing the epic in prose')
      .option('--out <file>', 'where to write the prose and the plan (default: <EPIC>.plan.md)')
      .option('--repo <dir>', 'the git repository (default: the current directory)')
      .option('--config <file>', 'config file (default: .github/epicflow.yml or epicflow.yml)'),
  ).action(async (file: string, o: DraftFlags) => {
    const code = await planDraftCommand(
      { file, out: o.out, repo: o.repo, config: o.config, ...isolationOf(o) },
      {
        stdout: (s) => ctx.io.stdout(s),
        stderr: (s) => ctx.io.stderr(s),
        cwd: ctx.io.cwd,
      },
      ctx.io.env === undefined ? {} : { env: ctx.io.env as NodeJS.ProcessEnv },
    );
    ctx.setExitCode(code);
  });
  plannerIsolation(
    plan
      .command('refine')
      .description(
        'let the planner add stories for your feedback to a drafted plan, the others kept',
      )
      .argument('<plan>', 'the plan file (with the plan section plan draft wrote)')
      .argument('<feedback>', 'what to add, in prose')
      .option('--epic <id>', 'the epic id (default: the plan file name)')
      .option('--repo <dir>', 'the git repository (default: the current directory)')
      .option('--config <file>', 'config file (default: .github/epicflow.yml or epicflow.yml)'),
  ).action(
    async (file: string, feedback: string, o: Omit<DraftFlags, 'out'> & { epic?: string }) => {
      ctx.setExitCode(
        await planRefineCommand(
          { file, feedback, epic: o.epic, repo: o.repo, config: o.config, ...isolationOf(o) },
          ctx,
        ),
      );
    },
  );
  plan
    .command('approve')
    .description('put the split proposed for a story that proved too big into the plan file')
    .argument('<plan>', 'the plan file the epic runs from')
    .argument('[story]', 'only the split of this story (default: every split waiting)')
    .option('--epic <id>', 'the epic id (default: the plan file name)')
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--config <file>', 'config file (default: .github/epicflow.yml or epicflow.yml)')
    .action(
      async (
        file: string,
        story: string | undefined,
        o: { epic?: string; repo?: string; config?: string },
      ) => {
        ctx.setExitCode(await planApproveCommand({ file, story, ...o }, ctx));
      },
    );
}

async function planApproveCommand(
  options: Parameters<typeof approveSplitsFromCli>[0],
  ctx: CliContext,
): Promise<number> {
  const { approved } = await approveSplitsFromCli(options, {
    cwd: ctx.io.cwd,
    env: (ctx.io.env as NodeJS.ProcessEnv | undefined) ?? process.env,
  });
  for (const a of approved) {
    ctx.io.stdout(`approved the split of ${a.story}: ${a.added.join(', ')} in its place\n`);
  }
  ctx.io.stdout(`wrote ${options.file}; run it with: epicflow run ${options.file}\n`);
  return EXIT_OK;
}

/** The fixed `--json` shape: `{"valid","stories","waves","violations":[{"code","message"}]}`. */
function planCheckJson(result: PlanResult): {
  valid: boolean;
  stories: number;
  waves: string[][];
  violations: { code: string; message: string }[];
} {
  if (result.ok) {
    return {
      valid: true,
      stories: result.plan.stories.length,
      waves: result.plan.waves.map((w) => [...w]),
      violations: [],
    };
  }
  return {
    valid: false,
    stories: result.storyCount,
    waves: [],
    violations: result.violations.map((v) => ({ code: v.code, message: v.message })),
  };
}
