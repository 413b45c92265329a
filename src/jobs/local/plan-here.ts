/**
 * One planning round on this machine, for every local kind that runs the planner (`plan
 * draft`, `plan refine`, a run's split proposals): a fresh scratch folder under the
 * planning root, taken back and removed when the job closes; the planner isolated as a
 * run's agent is (the agent user, the kernel sandbox), on a read-only checkout of `base`;
 * its executors, its homes and its roster wired one way.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import type { Untrusted } from '../../adapters/process/untrusted.js';
import { requirePlanner } from '../../core/config/coders.js';
import type { EpicflowConfig, ExecutorConfig } from '../../core/config/types.js';
import { parsePlan, readBackAsWritten, type PlanOptions } from '../../core/plan/index.js';
import { renderPlanSection, withPlanSection } from '../../core/planner/index.js';
import { emptyRosterState } from '../../core/roster/index.js';
import { planEpic, plannerRoster, type PlanningOutcome } from '../../engine/plan-epic.js';
import { executorLookup, resolveExecutorEnvs } from '../../composition/epic.js';
import { planningGit } from '../../composition/planning-tree.js';
import { planningRoot } from './local-epics.js';
import type { LocalConfig } from './local-config.js';
import { headingOf, writeWhole, type LocalJob, type LocalJobOptions } from './local-job.js';

/** What planning is done with: the config, its planners, the config files stories may not own. */
interface Planners {
  readonly config: EpicflowConfig;
  /** The executors with the planner role (`requirePlanner`). */
  readonly planners: readonly ExecutorConfig[];
  readonly configPaths: readonly string[];
}

/** One round's ask: the epic's prose, and what the planning use case takes beside it. */
type PlanningAsk = Omit<
  Parameters<typeof planEpic>[0],
  'home' | 'executorEnv' | 'config' | 'configPaths' | 'title' | 'epicText' | 'base'
> & {
  /** The scratch folder's name before its random part (`<epic>-refine-`). */
  readonly scratch: string;
  /** Who the planner runs as: the run's choice, or the command's flags (chosen here, said once). */
  readonly runAs: Untrusted | Pick<LocalJobOptions, 'agentUser' | 'sandbox'>;
  /** The epic's prose (its first heading is the title unless `title` is given). */
  readonly prose: string;
  readonly title?: string | undefined;
  /** The commit planned against (default: the repository's default base, HEAD). */
  readonly base?: string | undefined;
};

function chosen(runAs: PlanningAsk['runAs']): runAs is Untrusted {
  return 'isolated' in runAs;
}

/** Runs the planner on `ask` in a scratch folder of the job; what it changed there is discarded. */
export async function planHere(
  job: LocalJob,
  with_: Planners,
  say: {
    readonly emit: (message: string) => void;
    /** How the executor adapters run their CLIs (test hooks). */
    readonly deps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices'> | undefined;
  },
  ask: PlanningAsk,
): Promise<PlanningOutcome> {
  const { config, planners } = with_;
  const { env } = job.hooks;
  const { scratch, runAs, prose, title, base, ...rest } = ask;
  const dir = job.scratch(planningRoot(job.repo), scratch);
  const untrusted = chosen(runAs)
    ? runAs
    : await job.untrusted(runAs, { worktrees: dir, agentHome: join(dir, 'agent-home') });
  return planEpic(
    {
      ...rest,
      title: title ?? headingOf(prose),
      epicText: prose,
      base: base ?? (await job.repo.defaultBase()),
      config,
      configPaths: with_.configPaths,
      executorEnv: resolveExecutorEnvs(planners, env),
      home: (id) => join(dir, 'homes', id),
    },
    {
      git: planningGit(job.repo, join(dir, 'tree')),
      executors: executorLookup({ config, env, untrusted, deps: say.deps }),
      roster: plannerRoster(planners, { now: () => new Date() }, emptyRosterState()),
      emit: say.emit,
      signal: job.hooks.interrupt,
    },
  );
}

/** The config (`--config FILE`, else the repository's) and its executors with the planner role. */
export async function plannerConfig(
  job: LocalJob,
  given: string | undefined,
): Promise<LocalConfig & Planners> {
  const loaded = await job.config(given, { deferEnv: true, role: 'planner' });
  return {
    ...loaded,
    planners: requirePlanner(loaded.config, loaded.shownFile),
    configPaths: loaded.planOptions.configPaths,
  };
}

/**
 * Writes `markdown` with `planned` as its plan section (`note` above it) to `path`, whole,
 * and only when the file reads back as that plan (`what` names it in the error otherwise).
 */
export async function writePlanned(
  path: string,
  markdown: string,
  planned: Pick<Parameters<typeof renderPlanSection>[0], 'plan' | 'warnings'>,
  how: { readonly note: string; readonly options: PlanOptions; readonly what: string },
): Promise<void> {
  const document = withPlanSection(markdown, renderPlanSection({ ...planned, note: how.note }));
  readBackAsWritten(parsePlan(document, how.options), planned.plan, how.what);
  await mkdir(dirname(path), { recursive: true });
  await writeWhole(path, document);
}
