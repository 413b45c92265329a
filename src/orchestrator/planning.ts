/**
 * The decision's planning step (docs/planning.md): before the stories are
 * reconciled, whether the epic needs a plan drafted (labelled without one, or a
 * writer's `/plan`), is being planned, or ended planning without a plan. A new
 * planning attempt is written to the planning record with a compare-and-swap
 * and only then dispatched — the same story workflow, with the reserved story id
 * — so a redelivered event or a second App never dispatches it twice. Also the
 * end of a planning run that died before it could say so itself.
 */
import type { EpicView, GitHubRepo, GitHubStateStore } from '../adapters/github/index.js';
import { isTransient, statusOf } from '../adapters/github/errors.js';
import type { EpicflowConfig } from '../core/config/index.js';
import type { Command, PlanJobRef, Trigger } from '../core/epic/index.js';
import { jobId, jobInputs, planDigest, STATUS_MARKER } from '../core/epic/index.js';
import { ERROR_MARKER } from '../core/epic/markers.js';
import {
  decidePlanning,
  guidanceOf,
  hasPlanner,
  parsePlanningDoc,
  PLANNER_OPTION_HINT,
  PLANNING_DOC,
  planningReport,
  renderPlanningEnded,
  renderPlanningFailed,
  renderPlanningStatus,
  type PlanningDoc,
  type PlanningFacts,
} from '../core/epic/planning.js';
import { EpicflowError } from '../core/errors.js';
import { extractPlanBlocks } from '../core/plan/index.js';
import {
  outgrownText,
  proseOf,
  splitCandidates,
  splitPlanSection,
  type SplitRequest,
} from '../core/planner/index.js';
import type { ReportPlanning } from '../core/report/index.js';
import { stateFromView, type PlanLoad } from './load.js';
import { commentViolations } from './problems.js';
import type { EventIssue, HandleResult } from './types.js';

/** The planning record as a decision read it, with its compare-and-swap token. */
interface PlanningRead {
  readonly doc: PlanningDoc | undefined;
  readonly sha: string | null;
}

/** The planning record of the view; a record edited into something else is a state error. */
export function readPlanning(store: GitHubStateStore, view: EpicView): PlanningRead {
  const file = view.planningDoc;
  if (file === undefined) return { doc: undefined, sha: null };
  const path = store.docPath(PLANNING_DOC);
  let value: unknown;
  try {
    value = JSON.parse(file.text) as unknown;
  } catch {
    throw new EpicflowError('state', `GitHub state: ${path} on the state branch is not JSON`, {
      details: ['fix or delete the file, then comment /plan'],
    });
  }
  const parsed = parsePlanningDoc(value, path);
  if (!parsed.ok) throw new EpicflowError('state', `GitHub state: ${parsed.error}`);
  return { doc: parsed.doc, sha: file.sha };
}

/** What the plan of the issue is, for planning: none, the planner's section, people's, or broken. */
function planKindOf(body: string, load: PlanLoad): PlanningFacts['plan'] {
  if (!load.ok) {
    const onlyMissing = load.violations.every((v) => v.code === 'no-plan-block');
    return onlyMissing ? 'missing' : 'invalid';
  }
  const drafted =
    splitPlanSection(body).section !== undefined && extractPlanBlocks(proseOf(body)).length === 0;
  return drafted ? 'drafted' : 'written';
}

interface PlanningContext {
  readonly repo: GitHubRepo;
  readonly store: GitHubStateStore;
  readonly view: EpicView;
  readonly epic: EventIssue;
  readonly config: EpicflowConfig;
  readonly trigger: Trigger;
  readonly command: Command | null;
  /** Who sent the event (a writer: intake checked), when a person did. */
  readonly by: string | undefined;
  readonly planLoad: PlanLoad;
  readonly defaultBranch: string;
  readonly storyWorkflow: string;
  readonly replyTo: number;
  readonly now: string;
}

/** What reconcile is told about planning when the epic has a plan. */
interface PlanningShown {
  /** The plan is the planner's proposal, nobody approved it yet. */
  readonly proposed: boolean;
  /** What planning cost (the report's Planning row). */
  readonly report: ReportPlanning | undefined;
}

type PlanningOutcome =
  /** The decision goes on with the plan. */
  | {
      readonly kind: 'continue';
      readonly load: Extract<PlanLoad, { ok: true }>;
      readonly shown: PlanningShown;
    }
  /** The decision ends here. */
  | { readonly kind: 'done'; readonly result: HandleResult }
  /** The planning record changed under us: decide again. */
  | { readonly kind: 'conflict' };

export async function planningStep(ctx: PlanningContext): Promise<PlanningOutcome> {
  const { repo, store, epic, config, planLoad } = ctx;
  const read = readPlanning(store, ctx.view);
  const plan = planKindOf(epic.body, planLoad);
  const done = (result: Omit<HandleResult, 'epic' | 'dispatched'>): PlanningOutcome => ({
    kind: 'done',
    result: { ...result, epic: epic.number, dispatched: [] },
  });
  // An event older than the plan written since (a redelivered label): it asks for nothing.
  const fresh = ctx.view.issue?.body;
  if (plan === 'missing' && fresh !== undefined && extractPlanBlocks(fresh).length > 0) {
    return done({ outcome: 'ignored', reason: 'the issue holds a plan now: the event is older' });
  }
  const by = ctx.by ?? '';
  const trigger: PlanningFacts['trigger'] =
    ctx.command?.kind === 'plan'
      ? { kind: 'plan', by, guidance: guidanceOf(ctx.command.guidance) }
      : ctx.command?.kind === 'refine'
        ? { kind: 'refine', by, feedback: guidanceOf(ctx.command.feedback) }
        : ctx.trigger.kind === 'label'
          ? { kind: 'label', by }
          : { kind: 'other' };
  const plannerConfigured = hasPlanner(config.executors);
  // A story that proved too big (timed out, still red after its fix rounds): its split.
  const split =
    planLoad.ok && plan === 'drafted' && plannerConfigured
      ? splitCandidates(
          planLoad.plan,
          Object.values(stateFromView(store, planLoad.plan, ctx.view).records),
          read.doc?.splits ?? [],
        )[0]
      : undefined;
  const step = decidePlanning({
    trigger,
    plan,
    plannerConfigured,
    doc: read.doc,
    now: ctx.now,
    split,
  });
  switch (step.kind) {
    case 'reply':
      await repo.reply(ctx.replyTo, step.body);
      return done({ outcome: 'replied' });
    case 'wait':
      await ensurePlanningStatus(repo, epic, step.doc);
      return done({ outcome: 'reconciled', reason: 'planning' });
    case 'ended':
      // The planning job's comment (violations or error) says why and what to do.
      await ensurePlanningEnded(repo, epic, step.doc);
      return done({ outcome: 'invalid-plan', reason: `planning ${step.doc.status}` });
    case 'start':
      return startPlanning(ctx, read, step.doc, plan);
    case 'none':
      break;
  }
  if (!planLoad.ok) {
    const hint = plan === 'missing' && !plannerConfigured;
    const violations = planLoad.violations.map((v) =>
      hint && v.code === 'no-plan-block'
        ? { ...v, message: `${v.message}; or ${PLANNER_OPTION_HINT}` }
        : v,
    );
    await commentViolations(repo, epic.number, violations);
    return done({ outcome: 'invalid-plan' });
  }
  const doc = read.doc;
  return {
    kind: 'continue',
    load: planLoad,
    shown: {
      proposed:
        doc?.status === 'proposed' &&
        doc.planDigest !== undefined &&
        doc.planDigest === planDigest(planLoad.plan),
      report: planningReport(doc),
    },
  };
}

/** The status comment while planning runs (replaces whatever it said). */
async function ensurePlanningStatus(
  repo: GitHubRepo,
  epic: EventIssue,
  doc: PlanningDoc,
): Promise<void> {
  await repo.ensureComment({
    issueNumber: epic.number,
    marker: STATUS_MARKER,
    body: renderPlanningStatus({ epic: { number: epic.number, title: epic.title }, doc }),
  });
}

/** The status comment once planning ended without a plan. */
export async function ensurePlanningEnded(
  repo: GitHubRepo,
  epic: { readonly number: number; readonly title: string },
  doc: PlanningDoc,
): Promise<void> {
  await repo.ensureComment({
    issueNumber: epic.number,
    marker: STATUS_MARKER,
    body: renderPlanningEnded({ epic, doc }),
  });
}

/** The record first (compare-and-swap), then the dispatch of its attempt. */
async function startPlanning(
  ctx: PlanningContext,
  read: PlanningRead,
  doc: PlanningDoc,
  plan: PlanningFacts['plan'],
): Promise<PlanningOutcome> {
  const { repo, store, epic } = ctx;
  const written = await store.writeJson(PLANNING_DOC, doc, read.sha);
  if (!written.ok) return { kind: 'conflict' };
  const job: PlanJobRef = { kind: 'plan', epic: epic.number, attempt: doc.attempt };
  try {
    await repo.dispatchWorkflow({
      workflow: ctx.storyWorkflow,
      ref: ctx.defaultBranch,
      inputs: jobInputs(job),
    });
  } catch (e) {
    if (isTransient(e)) throw e;
    // Refused: no job runs, so the attempt is not left looking as if it ran.
    const reason = `GitHub refused to start the planning job: ${e instanceof Error ? e.message : String(e)}`;
    await store.writeJson(
      PLANNING_DOC,
      { ...doc, status: 'failed', problems: [reason], finishedAt: ctx.now },
      written.sha,
    );
    throw refusedPlanningDispatch(ctx, e);
  }
  const dispatched = [`${jobId(job)}#${job.attempt}`];
  if (plan === 'missing') await ensurePlanningStatus(repo, epic, doc);
  else if (doc.split !== undefined) {
    await repo.reply(ctx.replyTo, splitStartedText(doc.attempt, doc.split));
  } else if (doc.refine !== undefined) {
    await repo.reply(
      ctx.replyTo,
      `Refining (attempt ${doc.attempt}, refine round ${doc.refine}): the planner adds stories for the feedback, with ids \`r${doc.refine}-…\`, to the plan as it stands; the combined plan replaces the plan section when it is ready, and waits for \`/approve\`. The current stories stay exactly as they are, with their progress; until then the epic goes on with the current plan.`,
    );
  } else {
    await repo.reply(
      ctx.replyTo,
      `Re-planning (attempt ${doc.attempt}): the new plan replaces the plan section of the issue when it is ready, and waits for \`/approve\`. Stories that do not change keep their ids and their progress; until then the epic goes on with the current plan.`,
    );
  }
  return {
    kind: 'done',
    result: { outcome: 'reconciled', reason: 'planning', epic: epic.number, dispatched },
  };
}

/** The reply when a split starts: why, and that nothing changes before `/approve`. */
function splitStartedText(attempt: number, split: SplitRequest): string {
  return `Story \`${split.story}\` proved too big: ${outgrownText(split.outgrown)} (attempt ${split.attempt}). epicflow's planner drafts 2 to 4 smaller stories in its place (planning attempt ${attempt}, ids \`${split.story}-…\`); the plan with them replaces the plan section when it is ready and waits for \`/approve\`. Nothing changes before that: the other stories go on with the current plan.`;
}

function refusedPlanningDispatch(ctx: PlanningContext, e: unknown): unknown {
  if (statusOf(e instanceof EpicflowError ? e.cause : e) !== 404) return e;
  const path = `.github/workflows/${ctx.storyWorkflow}`;
  return new EpicflowError(
    'config',
    `the story workflow ${path} was not found on ${ctx.defaultBranch}: epicflow runs the planner in a job of it`,
    {
      details: [
        `add ${path} (with the inputs epic, story and attempt) to ${ctx.defaultBranch}, as the App's setup guide shows`,
      ],
      cause: e,
    },
  );
}

/**
 * A planning run completed. A job that ended its attempt already wrote the record; one
 * that died first (cancelled, out of time, a runner lost) left it active: it is marked
 * failed, and the epic's error comment says to comment `/plan` again.
 */
export async function planningRunFinished(input: {
  readonly repo: GitHubRepo;
  readonly store: GitHubStateStore;
  readonly view: EpicView;
  readonly epic: number;
  readonly attempt: number;
  readonly conclusion: string;
  readonly now: string;
}): Promise<HandleResult> {
  const read = readPlanning(input.store, input.view);
  const doc = read.doc;
  const base = { epic: input.epic, dispatched: [] };
  if (doc === undefined || doc.attempt !== input.attempt || doc.status !== 'active') {
    return { ...base, outcome: 'ignored', reason: 'planning run already recorded' };
  }
  const reason = `the planning job ended (${input.conclusion}) without recording an outcome`;
  const failed: PlanningDoc = {
    ...doc,
    status: 'failed',
    problems: [reason],
    finishedAt: input.now,
  };
  const wrote = await input.store.writeJson(PLANNING_DOC, failed, read.sha);
  if (!wrote.ok) return { ...base, outcome: 'ignored', reason: 'planning record changed' };
  await input.repo.ensureComment({
    issueNumber: input.epic,
    marker: ERROR_MARKER,
    body: renderPlanningFailed({ attempt: doc.attempt, reason, refine: doc.refine }),
  });
  // A refine round that died leaves the plan as it was: its status comment stays.
  if (input.view.issue !== undefined && failed.refine === undefined && failed.split === undefined)
    await ensurePlanningEnded(input.repo, input.view.issue, failed);
  return { ...base, outcome: 'reconciled', reason: 'planning failed' };
}
