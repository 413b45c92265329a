/**
 * The `epicflow plan refine PLAN.md "<feedback>"` kind: a refine round on this machine (docs/planning.md, "Refining a plan"). The plan section of the
 * file is kept exactly; the planner adds stories for the feedback with ids `r<n>-…`
 * (n: one more than the highest round the plan holds), on a read-only checkout of HEAD.
 * The combined plan, validated, replaces the plan section; what the planner could not
 * place is listed as not planned (printed, and kept in the epic's `not-planned.md`).
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { FileStateStore } from '../../adapters/state/file-store.js';
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan } from '../../core/model.js';
import { extractPlanBlocks, parsePlan } from '../../core/plan/index.js';
import { proseOf, refinePrefix, splitPlanSection } from '../../core/planner/index.js';
import type { PlanningOutcome } from '../../engine/plan-epic.js';
import { epicOfPlan } from './local-epics.js';
import { planHere, plannerConfig, writePlanned } from './plan-here.js';
import {
  runLocalKind,
  type LocalHooks,
  type LocalJobOptions,
  type LocalKind,
} from './local-job.js';

/** Where a refine round's not-planned items are kept, in the epic's state folder. */
const NOT_PLANNED_FILE = 'not-planned.md';

export interface LocalRefineOptions extends Pick<LocalJobOptions, 'agentUser' | 'sandbox'> {
  /** The plan file (a plan section drafted by the planner). */
  readonly file: string;
  readonly feedback: string;
  readonly repo?: string | undefined;
  readonly config?: string | undefined;
  /** The epic id (default: the plan file name), for which stories are merged. */
  readonly epic?: string | undefined;
}

interface LocalRefineHooks extends LocalHooks {
  readonly onEvent: (message: string) => void;
  readonly executorDeps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices'> | undefined;
}

interface LocalRefineResult {
  readonly outcome: PlanningOutcome;
  readonly round: number;
  /** The ids the round added (empty unless planned). */
  readonly added: readonly string[];
  /** Set when the plan file was written. */
  readonly written: boolean;
  /** The not-planned file, when the planner listed any. */
  readonly notPlannedFile?: string | undefined;
}

/** The next refine round: one more than the highest `r<n>-` id of the plan. */
function nextRefineRound(plan: Plan): number {
  let highest = 0;
  for (const s of plan.stories) {
    const n = /^r(\d+)-/.exec(s.id)?.[1];
    if (n !== undefined) highest = Math.max(highest, Number(n));
  }
  return highest + 1;
}

/** `plan refine`: the plan file and feedback checked, then a refine round on it. */
const refineKind: LocalKind<
  LocalRefineOptions,
  LocalRefineHooks,
  {
    readonly planPath: string;
    readonly markdown: string;
    readonly planners: Awaited<ReturnType<typeof plannerConfig>>;
    readonly feedback: string;
    readonly prose: string;
    readonly current: Plan;
    readonly epic: string;
  },
  LocalRefineResult
> = {
  async prepare(job, options) {
    const { path: planPath, text: markdown } = await job.input(options.file, 'plan');
    const planners = await plannerConfig(job, options.config);
    const feedback = options.feedback.trim();
    if (feedback === '') {
      throw new EpicflowError('usage', 'plan refine needs feedback: what to add', {
        details: [`e.g. epicflow plan refine ${options.file} "add a receipt after the payment"`],
      });
    }
    const prose = proseOf(markdown);
    const section = splitPlanSection(markdown).section;
    if (extractPlanBlocks(prose).length > 0 || section === undefined) {
      throw new EpicflowError(
        'usage',
        section === undefined && extractPlanBlocks(prose).length === 0
          ? `${options.file} has no plan yet`
          : `${options.file} holds a plan written by hand, outside the plan section`,
        {
          details: [
            section === undefined && extractPlanBlocks(prose).length === 0
              ? `draft one first: epicflow plan draft ${options.file}`
              : 'plan refine adds stories to the plan section epicflow drafted; add the stories to your plan yourself',
          ],
        },
      );
    }
    const parsed = parsePlan(section, planners.planOptions);
    if (!parsed.ok) {
      throw new EpicflowError('plan', `invalid plan in ${options.file}`, {
        details: parsed.violations.map((v) => `${v.code}: ${v.message}`),
      });
    }
    const current = parsed.plan;
    const epic = epicOfPlan(planPath, options.epic);
    return { planPath, markdown, planners, feedback, prose, current, epic };
  },

  async run(job, prepared, options, hooks) {
    const { planPath, markdown, planners, feedback, prose, current, epic } = prepared;
    const round = nextRefineRound(current);
    // Stories already merged are context for the planner; an epic that never ran has none.
    const folders = job.folders(epic);
    const store = existsSync(folders.state) ? await job.lock(folders) : undefined;
    const merged = (
      await (store ?? new FileStateStore(folders.state)).listStories().catch(() => [])
    )
      .filter((r) => r.status === 'done' && current.stories.some((s) => s.id === r.story))
      .map((r) => r.story);

    // The planner runs as plan draft's does: as the agent user, in the kernel sandbox.
    const outcome = await planHere(
      job,
      planners,
      { emit: hooks.onEvent, deps: hooks.executorDeps },
      {
        scratch: `${epic}-refine-`,
        runAs: options,
        epic,
        prose,
        guidance: feedback,
        previous: current,
        refine: { round, merged },
      },
    );
    if (outcome.kind !== 'planned') return { outcome, round, added: [], written: false };
    const added = outcome.plan.stories
      .filter((s) => !current.stories.some((c) => c.id === s.id))
      .map((s) => s.id);
    let notPlannedFile: string | undefined;
    if (outcome.notPlanned.length > 0) {
      notPlannedFile = join(folders.state, NOT_PLANNED_FILE);
      const first = !existsSync(notPlannedFile);
      await (store ?? new FileStateStore(folders.state)).appendText(
        NOT_PLANNED_FILE,
        `${first ? '# Not planned\n' : ''}\n## Refine round ${round}\n\nFeedback the planner could not place as stories, with its questions:\n\n${outcome.notPlanned.map((l) => `- ${l}`).join('\n')}\n`,
      );
    }
    if (added.length === 0) return { outcome, round, added, written: false, notPlannedFile };
    await writePlanned(planPath, markdown, outcome, {
      note: `Refined by epicflow's planner (refine round ${round}): the stories ${refinePrefix(round)}… were added, the others are as they were. Check them, then run it with \`epicflow run ${basename(options.file)}\`.`,
      options: planners.planOptions,
      what: 'the refined plan',
    });
    return { outcome, round, added, written: true, notPlannedFile };
  },
};

/** Runs a refine round on the plan file; writes it only when the combined plan is valid. */
export function refineLocally(
  options: LocalRefineOptions,
  hooks: LocalRefineHooks,
): Promise<LocalRefineResult> {
  return runLocalKind(refineKind, options, hooks);
}
