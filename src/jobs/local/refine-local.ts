/**
 * The local composition root of `epicflow plan refine PLAN.md "<feedback>"`: a refine
 * round on this machine (docs/planning.md, "Refining a plan"). The plan section of the
 * file is kept exactly; the planner adds stories for the feedback with ids `r<n>-…`
 * (n: one more than the highest round the plan holds), on a read-only checkout of HEAD.
 * The combined plan, validated, replaces the plan section; what the planner could not
 * place is listed as not planned (printed, and kept in the epic's `not-planned.md`).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { FileStateStore } from '../../adapters/state/file-store.js';
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import { requirePlanner } from '../../core/config/coders.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan } from '../../core/model.js';
import { extractPlanBlocks, parsePlan, readBackAsWritten } from '../../core/plan/index.js';
import {
  proseOf,
  refinePrefix,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
} from '../../core/planner/index.js';
import { emptyRosterState } from '../../core/roster/index.js';
import { planEpic, plannerRoster, type PlanningOutcome } from '../../engine/plan-epic.js';
import { executorLookup, resolveExecutorEnvs } from '../../composition/epic.js';
import { checkEpicId, planningRoot } from './local-epics.js';
import {
  headingOf,
  localJob,
  writeWhole,
  type LocalHooks,
  type LocalJobOptions,
} from './local-job.js';
import { planningGit } from '../../composition/planning-tree.js';

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

/** Runs a refine round on the plan file; writes it only when the combined plan is valid. */
export function refineLocally(
  options: LocalRefineOptions,
  hooks: LocalRefineHooks,
): Promise<LocalRefineResult> {
  return localJob(hooks, options.repo, async (job) => {
    const { repo } = job;
    const { path: planPath, text: markdown } = await job.input(options.file, 'plan');
    const { config, planOptions, shownFile } = await job.config(options.config, {
      deferEnv: true,
      role: 'planner',
    });
    const planners = requirePlanner(config, shownFile);
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
    const parsed = parsePlan(section, planOptions);
    if (!parsed.ok) {
      throw new EpicflowError('plan', `invalid plan in ${options.file}`, {
        details: parsed.violations.map((v) => `${v.code}: ${v.message}`),
      });
    }
    const current = parsed.plan;
    const round = nextRefineRound(current);
    const epic = options.epic ?? basename(planPath, extname(planPath));
    checkEpicId(
      epic,
      options.epic === undefined ? `from the plan file name ${basename(planPath)}` : '--epic',
    );
    // Stories already merged are context for the planner; an epic that never ran has none.
    const folders = job.folders(epic);
    const store = existsSync(folders.state) ? await job.lock(folders) : undefined;
    const merged = (
      await (store ?? new FileStateStore(folders.state)).listStories().catch(() => [])
    )
      .filter((r) => r.status === 'done' && current.stories.some((s) => s.id === r.story))
      .map((r) => r.story);

    const base = await repo.defaultBase();
    const planningDir = job.scratch(planningRoot(repo), `${epic}-refine-`);
    // The planner runs as plan draft's does: as the agent user, in the kernel sandbox.
    const untrusted = await job.untrusted(options, {
      worktrees: planningDir,
      agentHome: join(planningDir, 'agent-home'),
    });
    const outcome = await planEpic(
      {
        epic,
        title: headingOf(prose),
        epicText: prose,
        base,
        config,
        configPaths: planOptions.configPaths,
        executorEnv: resolveExecutorEnvs(planners, hooks.env),
        home: (id) => join(planningDir, 'homes', id),
        guidance: feedback,
        previous: current,
        refine: { round, merged },
      },
      {
        git: planningGit(repo, join(planningDir, 'tree')),
        executors: executorLookup({
          config,
          env: hooks.env,
          untrusted,
          deps: hooks.executorDeps,
        }),
        roster: plannerRoster(planners, { now: () => new Date() }, emptyRosterState()),
        emit: hooks.onEvent,
        signal: hooks.interrupt,
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
    const document = withPlanSection(
      markdown,
      renderPlanSection({
        plan: outcome.plan,
        warnings: outcome.warnings,
        note: `Refined by epicflow's planner (refine round ${round}): the stories ${refinePrefix(round)}… were added, the others are as they were. Check them, then run it with \`epicflow run ${basename(options.file)}\`.`,
      }),
    );
    readBackAsWritten(parsePlan(document, planOptions), outcome.plan, 'the refined plan');
    await mkdir(dirname(planPath), { recursive: true });
    await writeWhole(planPath, document);
    return { outcome, round, added, written: true, notPlannedFile };
  });
}
