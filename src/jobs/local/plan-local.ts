/**
 * The `epicflow plan draft` kind: its `prepare` reads the epic's prose and the config and
 * checks everything before running anything; its `run` plans on a detached worktree at
 * HEAD (`plan-here.ts`: the planner isolated as a run's agent) and writes the prose
 * followed by the plan section to the output file — only a plan that parses as it is
 * written.
 */
import { basename, extname } from 'node:path';
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan } from '../../core/model.js';
import { extractPlanBlocks, parsePlan } from '../../core/plan/index.js';
import { proseOf, splitPlanSection } from '../../core/planner/index.js';
import { readBrief, requireApprovedBrief } from '../../core/planner/brief.js';
import type { PlanningOutcome } from '../../engine/plan-epic.js';
import { planHere, plannerConfig, writePlanned } from './plan-here.js';
import {
  runLocalKind,
  type LocalHooks,
  type LocalJobOptions,
  type LocalKind,
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

/** `plan draft`: the epic's prose checked, then planned; the plan written only when valid. */
const draftKind: LocalKind<
  LocalDraftOptions,
  LocalDraftHooks,
  {
    readonly markdown: string;
    readonly prose: string;
    readonly out: string;
    readonly shownOut: string;
    readonly planners: Awaited<ReturnType<typeof plannerConfig>>;
    readonly previous: Plan | undefined;
  },
  LocalDraftResult
> = {
  async prepare(job, options) {
    const { text: markdown } = await job.input(options.file, 'epic');
    const shownOut = options.out ?? defaultOutFile(options.file);
    const planners = await plannerConfig(job, options.config);
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
      const parsed = parsePlan(split.section, planners.planOptions);
      if (parsed.ok) previous = parsed.plan;
    }
    return { markdown, prose, out: job.path(shownOut), shownOut, planners, previous };
  },

  async run(job, prepared, options, hooks) {
    const { markdown, prose, out, shownOut, planners, previous } = prepared;
    const epic = epicIdOf(options.file);
    // The planner runs as a run's agent does: as the agent user, in the kernel sandbox.
    const outcome = await planHere(
      job,
      planners,
      { emit: hooks.onEvent, deps: hooks.executorDeps },
      { scratch: `${epic}-`, runAs: options, epic, prose, previous },
    );
    if (outcome.kind !== 'planned') return { outcome, out, shownOut, written: false };
    await writePlanned(out, markdown, outcome, {
      note: `Drafted by epicflow's planner from the text above: check it, edit it if needed, then run it with \`epicflow run ${basename(shownOut)}\`.`,
      options: planners.planOptions,
      what: 'the drafted plan',
    });
    return { outcome, out, shownOut, written: true };
  },
};

/** Runs the planner on the epic's prose; writes the plan only when it is valid. */
export function draftPlanLocally(
  options: LocalDraftOptions,
  hooks: LocalDraftHooks,
): Promise<LocalDraftResult> {
  return runLocalKind(draftKind, options, hooks);
}
