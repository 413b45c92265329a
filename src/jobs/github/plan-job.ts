/**
 * One planning attempt in two Actions jobs of one run (docs/planning.md). Both read
 * everything from GitHub by id and check it first: the attempt must be the one the
 * planning record names, still active (`planningRecord`, checked by the shell). The work job, whose token can
 * only read, checks out the default branch; the planner runs on a read-only worktree of it,
 * as the job's untrusted user, with no credential in reach (the checkout's are scrubbed
 * first); the outcome is handed over as text (`draftPlanJob`). The publish job, which holds
 * the write credential, checks it again and writes it (plan-publish.ts).
 */
import { join } from 'node:path';
import { GitHubStateStore, type GitHubRepo } from '../../adapters/github/index.js';
import { resolveExecutorEnvs } from '../../composition/epic.js';
import { requirePlanner } from '../../core/config/index.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import { failIfOwned, type PlanJobRef } from '../../core/epic/index.js';
import { ERROR_MARKER } from '../../core/epic/markers.js';
import { PLANNING_DOC, renderPlanningFailed, type PlanningDoc } from '../../core/epic/planning.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan } from '../../core/model.js';
import {
  extractPlanBlocks,
  parsePlan,
  planOptionsFor,
  readBackAsWritten,
} from '../../core/plan/index.js';
import {
  proseOf,
  outgrownText,
  refinePrefix,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
} from '../../core/planner/index.js';
import { GITHUB_BODY_MAX } from '../../core/report/index.js';
import { emptyRosterState } from '../../core/roster/index.js';
import { planEpic, plannerRoster } from '../../engine/plan-epic.js';
import { HANDOVER_VERSION, type PlanHandover } from '../../core/publish/handover.js';
import { foundDoc, type FoundRecord, type RecordSteps } from './job-record.js';
import { openCheckout, type CheckoutJobInput, type OpenedJob } from './job-shell.js';
import { loadPlan, stateFromView } from '../../orchestrator/load.js';
import { ensurePlanningEnded, readPlanning } from '../../orchestrator/planning.js';

/** The job checkout is the default branch; the planner runs as `untrusted`. */
export interface PlanJobInput extends CheckoutJobInput {
  /** The story workflow (the planning job's own), for the decision after it. */
  readonly storyWorkflow?: string | undefined;
}

/** Everything read and checked before the planner runs. */
export interface PreparedPlanning {
  readonly config: EpicflowConfig;
  readonly store: GitHubStateStore;
  readonly doc: PlanningDoc;
  readonly docSha: string;
  readonly issue: { readonly number: number; readonly title: string; readonly body: string };
  readonly labels: readonly string[];
  readonly previous: Plan | undefined;
  /** Stories of `previous` already merged (a refine round tells the planner). */
  readonly merged: readonly string[];
  readonly defaultBranch: string;
}

/**
 * A planning attempt's record steps: the configuration, the planning record, then the issue;
 * any mismatch refused clearly. A lost save means a newer attempt took over.
 */
export const planningRecord: RecordSteps<
  PlanJobInput,
  PlanningDoc,
  FoundRecord<PlanningDoc>,
  PreparedPlanning
> = {
  find: async (input, { config, view, store }) => {
    requirePlanner(config, input.configPath);
    return foundDoc('plan', readPlanning(store, view));
  },
  prepare: (input, opened, _found, fresh) =>
    preparePlanning(input, opened, fresh.record, fresh.sha),
  lostSave: 'superseded',
};

/** Reads the issue around the planning record found fresh; refuses clearly on any mismatch. */
async function preparePlanning(
  input: PlanJobInput,
  opened: OpenedJob,
  doc: PlanningDoc,
  docSha: string,
): Promise<PreparedPlanning> {
  const { repo, epic } = input;
  const { config, view, store, issue, defaultBranch } = opened;
  const body = issue.body;
  if (extractPlanBlocks(proseOf(body)).length > 0) {
    throw new EpicflowError('plan', `epic #${epic} holds a plan written outside the plan section`, {
      details: ['the planner drafts plans for issues without one: edit the plan instead'],
    });
  }
  const options = planOptionsFor(config, input.configPath);
  const section = splitPlanSection(body).section;
  const parsed = section === undefined ? undefined : parsePlan(section, options);
  let previous = parsed?.ok === true ? parsed.plan : undefined;
  if (section !== undefined && previous === undefined && extractPlanBlocks(section).length === 0) {
    // The planner's earlier plan made of sub-issues (planner.subIssues): the section holds no block.
    const load = await loadPlan(repo, { number: epic, body }, config, {
      subIssues: issue.subIssues,
      configFile: input.configPath,
    });
    if (load.ok) previous = load.plan;
  }
  if (
    doc.split !== undefined &&
    previous?.stories.some((s) => s.id === doc.split?.story) !== true
  ) {
    throw new EpicflowError(
      'plan',
      `epic #${epic}: story ${doc.split.story} is no longer in the plan section, so it cannot be split`,
      { details: ['nothing was written; the plan stays as it is'] },
    );
  }
  if (doc.refine !== undefined && previous === undefined) {
    throw new EpicflowError(
      'plan',
      `epic #${epic} has no valid plan in its plan section: /refine adds stories to one`,
      { details: ['comment /plan to have a plan drafted, then /refine'] },
    );
  }
  const records = previous === undefined ? {} : stateFromView(store, previous, view).records;
  const merged = Object.entries(records)
    .filter(([, r]) => r.status === 'done')
    .map(([id]) => id);
  return {
    config,
    store,
    doc,
    docSha,
    issue: { number: issue.number, title: issue.title, body },
    labels: issue.labels,
    previous,
    merged,
    defaultBranch,
  };
}

/**
 * A job that could not run its attempt: the record failed with the reason (same attempt,
 * still active, only: a stale job leaves the newer attempt alone), the epic's error
 * comment saying why and its status comment that planning ended.
 */
export async function recordPlanningRefusal(
  repo: GitHubRepo,
  job: PlanJobRef,
  reason: string,
  now: Date,
): Promise<void> {
  const { epic, attempt } = job;
  const store = new GitHubStateStore({ repo, epic: String(epic) });
  const owned = failIfOwned<PlanningDoc>(job, (current) => ({
    ...current,
    status: 'failed',
    problems: [reason],
    finishedAt: now.toISOString(),
  }));
  await store.updateJson<PlanningDoc | null>(PLANNING_DOC, owned.change);
  const failed = owned.failed();
  if (failed === undefined) return;
  await repo.ensureComment({
    issueNumber: epic,
    marker: ERROR_MARKER,
    body: renderPlanningFailed({ attempt, reason, refine: failed.refine }),
  });
  // A refine round that could not run leaves the plan as it was: its status comment stays.
  if (failed.refine !== undefined || failed.split !== undefined) return;
  const issue = await repo.labelledIssue(epic);
  await ensurePlanningEnded(repo, issue, failed);
}

/**
 * The work job's part (a token that can only read): the planner drafts on a read-only
 * worktree of the checkout; what it proposes is handed over for the publish job
 * (plan-publish.ts) as text — the plan section as the issue would get it, read back as
 * the plan before it leaves — with the rounds, planners and usage.
 */
export async function draftPlanJob(
  input: PlanJobInput,
  prepared: PreparedPlanning,
): Promise<PlanHandover> {
  const { config, doc, issue } = prepared;
  const emit = input.onEvent ?? (() => undefined);
  const clock = input.now ?? ((): Date => new Date());
  const { git, base, folder, executors } = await openCheckout(input, config, 'planning', emit);
  const planners = requirePlanner(config, input.configPath);
  const options = planOptionsFor(config, input.configPath);
  const prose = proseOf(issue.body);
  const outcome = await planEpic(
    {
      epic: String(input.epic),
      title: issue.title,
      epicText: prose,
      base,
      config,
      configPaths: options.configPaths,
      executorEnv: resolveExecutorEnvs(planners, input.env),
      home: (id) => join(folder, 'homes', id),
      guidance: doc.guidance,
      previous: prepared.previous,
      ...(doc.refine === undefined
        ? {}
        : { refine: { round: doc.refine, merged: prepared.merged } }),
      ...(doc.split === undefined ? {} : { split: doc.split }),
    },
    {
      git,
      executors,
      roster: plannerRoster(planners, { now: clock }, emptyRosterState()),
      emit,
      signal: input.interrupt,
    },
  );
  const costs = {
    version: HANDOVER_VERSION,
    job: 'plan',
    epic: String(input.epic),
    attempt: input.attempt,
    rounds: outcome.rounds,
    executors: outcome.executors,
    usage: outcome.usage,
    notes: outcome.notes,
  } as const;
  if (outcome.kind === 'planned') {
    const section = renderPlanSection({
      plan: outcome.plan,
      warnings: outcome.warnings,
      note: planNote(doc),
      // Room for the author's text: an issue body holds at most GITHUB_BODY_MAX characters.
      maxChars: Math.max(4_000, GITHUB_BODY_MAX - prose.length - 200),
    });
    // What the issue would hold reads back as the plan drafted, before it leaves this job.
    readBackAsWritten(
      parsePlan(withPlanSection(issue.body, section), options),
      outcome.plan,
      'the drafted plan',
    );
    return {
      ...costs,
      outcome: { kind: 'planned', section, notPlanned: outcome.notPlanned },
    };
  }
  if (outcome.kind === 'invalid') {
    const problems = [...outcome.violations, ...outcome.mustFix].map(
      (v) => `${v.code}: ${v.message}`,
    );
    return { ...costs, outcome: { kind: 'invalid', problems } };
  }
  return { ...costs, outcome: { kind: 'failed', reason: outcome.reason } };
}

/** The note under a drafted plan: what made it, and what a writer does next. */
function planNote(doc: PlanningDoc): string {
  if (doc.split !== undefined) {
    return `Split by epicflow's planner: story \`${doc.split.story}\` proved too big (${outgrownText(doc.split.outgrown)}); the stories ${doc.split.story}-… take its place, and the stories that depended on it depend on all of them. Check it: a user with write permission edits it or comments \`/approve\` to start them.`;
  }
  if (doc.refine === undefined) {
    return "Drafted by epicflow's planner from the text above. Check it: a user with write permission edits it or comments `/approve` to start it; `/plan <feedback>` drafts it again.";
  }
  return `Refined by epicflow's planner (refine round ${doc.refine}): the stories ${refinePrefix(doc.refine)}… were added to the plan, the others are as they were. Check it: a user with write permission edits it or comments \`/approve\` to start the new stories.`;
}
