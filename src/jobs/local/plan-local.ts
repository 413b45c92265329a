/**
 * The local composition root of `epicflow plan draft`: reads the epic's prose
 * and the config, checks everything before running anything, wires a detached
 * worktree at HEAD, the executor adapters and an in-memory roster of planners
 * into the planning use case, and writes the prose followed by the plan
 * section to the output file — only a plan that parses as it is written.
 */
import { planningGit } from '../../composition/planning-tree.js';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import { requirePlanner } from '../../core/config/coders.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan } from '../../core/model.js';
import { extractPlanBlocks, parsePlan, readBackAsWritten } from '../../core/plan/index.js';
import {
  proseOf,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
} from '../../core/planner/index.js';
import { emptyRosterState } from '../../core/roster/index.js';
import { readBrief, requireApprovedBrief } from '../../core/planner/brief.js';
import { planEpic, plannerRoster, type PlanningOutcome } from '../../engine/plan-epic.js';
import { executorLookup, resolveExecutorEnvs } from '../../composition/epic.js';
import { planningRoot } from './local-epics.js';
import {
  headingOf,
  localJob,
  writeWhole,
  type LocalHooks,
  type LocalJobOptions,
} from './local-job.js';

export interface LocalDraftOptions extends Pick<
  LocalJobOptions,
  'repo' | 'config' | 'agentUser' | 'sandbox'
> {
  /** The epic's markdown file (its prose; a plan section in it is re-planned). */
  readonly file: string;
  /** Default: `<EPIC>.plan.md` next to the epic file. */
  readonly out?: string | undefined;
}

interface LocalDraftHooks extends LocalHooks {
  /** One line per planning step. */
  readonly onEvent: (message: string) => void;
  /** How the executor adapters run their CLIs (binaries, model API base URLs). */
  readonly executorDeps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices'> | undefined;
}

export interface LocalDraftResult {
  readonly outcome: PlanningOutcome;
  /** The output file (absolute). */
  readonly out: string;
  /** The output file as the user named it (for messages). */
  readonly shownOut: string;
  /** Set when the plan was written. */
  readonly written: boolean;
}

/** `<EPIC>.plan.md` next to the epic file. */
export function defaultOutFile(file: string): string {
  const ext = extname(file);
  return `${ext === '' ? file : file.slice(0, -ext.length)}.plan.md`;
}

/** A file name as an epic id (`EPICFLOW_EPIC`, folder names): letters, digits, `.`, `_`, `-`. */
function epicIdOf(file: string): string {
  const id = basename(file, extname(file))
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+/, '')
    .slice(0, 64);
  return id === '' ? 'epic' : id;
}

/** Runs the planner on the epic's prose; writes the plan only when it is valid. */
export function draftPlanLocally(
  options: LocalDraftOptions,
  hooks: LocalDraftHooks,
): Promise<LocalDraftResult> {
  return localJob(hooks, options.repo, async (job) => {
    const { repo } = job;
    const { text: markdown } = await job.input(options.file, 'epic');
    const shownOut = options.out ?? defaultOutFile(options.file);
    const out = job.path(shownOut);

    const { config, planOptions, shownFile } = await job.config(options.config, {
      deferEnv: true,
      role: 'planner',
    });
    const planners = requirePlanner(config, shownFile);

    // A plan section from an earlier draft is re-planned (its ids kept); a block outside it is not prose.
    const split = splitPlanSection(markdown);
    const prose = proseOf(markdown);
    if (extractPlanBlocks(prose).length > 0) {
      throw new EpicflowError('usage', `${options.file} already holds a plan block`, {
        details: [
          `run it with: epicflow run ${options.file}`,
          'plan draft turns prose into a plan: remove the ```epicflow block to draft one',
        ],
      });
    }
    // A brief is planned from only once it is approved with every question answered.
    const brief = readBrief(prose);
    if (brief !== null) requireApprovedBrief(brief, options.file);
    if (prose.trim() === '') {
      throw new EpicflowError('usage', `${options.file} has no text to plan from`, {
        details: ['describe the epic in prose: what to build, for whom, what done looks like'],
      });
    }
    let previous: Plan | undefined;
    if (split.section !== undefined) {
      const parsed = parsePlan(split.section, planOptions);
      if (parsed.ok) previous = parsed.plan;
    }

    const executorEnv = resolveExecutorEnvs(planners, hooks.env);
    const base = await repo.defaultBase();
    const epic = epicIdOf(options.file);
    const planningDir = job.scratch(planningRoot(repo), `${epic}-`);
    const treePath = join(planningDir, 'tree');
    // The planner runs as a run's agent does: as the agent user, in the kernel sandbox.
    const untrusted = await job.untrusted(options, {
      worktrees: planningDir,
      agentHome: join(planningDir, 'agent-home'),
    });
    const clock = { now: () => new Date() };

    const outcome = await planEpic(
      {
        epic,
        title: headingOf(prose),
        epicText: prose,
        base,
        config,
        configPaths: planOptions.configPaths,
        executorEnv,
        home: (id) => join(planningDir, 'homes', id),
        previous,
      },
      {
        git: planningGit(repo, treePath),
        executors: executorLookup({
          config,
          env: hooks.env,
          untrusted,
          deps: hooks.executorDeps,
        }),
        roster: plannerRoster(planners, clock, emptyRosterState()),
        emit: hooks.onEvent,
        signal: hooks.interrupt,
      },
    );

    if (outcome.kind !== 'planned') return { outcome, out, shownOut, written: false };
    const section = renderPlanSection({
      plan: outcome.plan,
      warnings: outcome.warnings,
      note: `Drafted by epicflow's planner from the text above: check it, edit it if needed, then run it with \`epicflow run ${basename(shownOut)}\`.`,
    });
    const document = withPlanSection(markdown, section);
    readBackAsWritten(parsePlan(document, planOptions), outcome.plan, 'the drafted plan');
    await mkdir(dirname(out), { recursive: true });
    await writeWhole(out, document);
    return { outcome, out, shownOut, written: true };
  });
}
