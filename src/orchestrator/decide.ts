/**
 * The decision of one epic: load everything durable in one read, reconcile, apply;
 * again from scratch whenever a record changed under us (compare-and-swap), at most
 * a few times. One decision at a time per epic in this process (lock.ts).
 */
import type { EpicView } from '../adapters/github/index.js';
import { GitHubStateStore } from '../adapters/github/index.js';
import { coderSlots, type EpicflowConfig } from '../core/config/index.js';
import { epicDocPatch } from '../core/epic/epic-doc.js';
import type { Command, DispatchedRun, Trigger } from '../core/epic/index.js';
import { overdueDispatches, reconcile, validateCommand } from '../core/epic/index.js';
import { describeError, EpicflowError, isEpicflowError } from '../core/errors.js';
import { LAND_DOC } from '../core/epic/landing.js';
import { readLandLog, type LandRecord } from '../core/land/index.js';
import { epicBranchName } from '../core/model.js';
import { applyActions, type ApplyContext } from './apply.js';
import { updateEpicDoc } from './epic-doc.js';
import { ensureFullReport, fullReportUrl } from './full-report.js';
import { landBeforeReady } from './landing.js';
import { expectBoard, loadPlan, readView, stateFromView } from './load.js';
import { epicLockBusy, withEpicLock } from './lock.js';
import { epicDocOf, epicRepo, ownerClaim } from './owner.js';
import { planningStep } from './planning.js';
import { applyRetroOnResume, requestRetro } from './retro.js';
import { noteRateLimit } from './rate-limit.js';
import { clearProblem, clearViolations, reportFailure } from './problems.js';
import { dispatchedRuns } from './runs.js';
import { ReviewAnswers, reviewTrigger } from './review.js';
import { withReviewStories } from '../core/epic/review.js';
import { planOptionsFor } from '../core/plan/index.js';
import type { SettledDeps } from './settings.js';
import type { EventIssue, HandleResult } from './types.js';

/** Fresh decisions after a record changed under us, before giving up. */
const MAX_DECISIONS = 6;

/**
 * The pause before deciding again after a lost compare-and-swap, times the round. The
 * record changed because another decider (a story job's reconcile, another App instance)
 * is deciding the same epic right now: deciding again at once would chase its writes one
 * by one and repeat the ones no compare-and-swap guards (a sub-issue closed, a board value,
 * a comment); after the pause the decision reads what the other wrote and does only what
 * is left.
 */
export const CONFLICT_PAUSE_MS = 5_000;

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Decision {
  readonly epic: EventIssue;
  readonly config: EpicflowConfig;
  readonly trigger: Trigger;
  readonly replyTo: number;
  readonly command: Command | null;
  /** Who sent the event, when a person did (a writer: intake checked). */
  readonly by?: string;
  /** What the caller already read; used by the first decision only (later ones read again). */
  readonly view?: EpicView;
}

/** Load, reconcile, apply — again from scratch whenever a record changed under us. */
export async function decide(deps: SettledDeps, d: Decision): Promise<HandleResult> {
  const { repo } = deps;
  const key = `${repo.fullName}#${d.epic.number}`;
  // A view read while another decision on the epic ran may miss what that one did (the
  // sub-issues it created): read again once it is our turn.
  const { view: _stale, ...unread } = d;
  const decision = epicLockBusy(key) ? unread : d;
  return withEpicLock(key, async () => {
    try {
      return await decideUntilSettled(deps, decision);
    } catch (e) {
      await reportFailure(deps, d.epic.number, e);
      await noteRateLimit(deps, d.epic.number, e);
      throw e;
    }
  });
}

async function decideUntilSettled(deps: SettledDeps, d: Decision): Promise<HandleResult> {
  const dispatched: string[] = [];
  let next = d;
  for (let round = 1; round <= MAX_DECISIONS; round++) {
    const { view: _read, ...fresh } = next;
    const result = await decideOnce(deps, round === 1 ? next : fresh);
    if (result === 'conflict') {
      if (round < MAX_DECISIONS) await (deps.sleep ?? realSleep)(CONFLICT_PAUSE_MS * round);
      continue;
    }
    if ('again' in result) {
      // A queued review round may start: decided again with the comments listed now.
      // (Or a retro's approved fixes were applied: decided again with the plan as edited.)
      dispatched.push(...result.dispatched);
      next = {
        ...fresh,
        ...(result.epic === undefined ? {} : { epic: result.epic }),
        trigger: result.again,
        command: null,
        replyTo: result.replyTo,
      };
      continue;
    }
    if (result.outcome !== 'reconciled') return result;
    dispatched.push(...result.dispatched);
    return { ...result, dispatched };
  }
  throw new EpicflowError(
    'state',
    `GitHub state: the records of epic #${d.epic.number} in ${deps.repo.fullName} kept changing while epicflow decided; comment \`/resume\` to try again`,
  );
}

async function decideOnce(
  deps: SettledDeps,
  d: Decision,
): Promise<
  | HandleResult
  | 'conflict'
  | { again: Trigger; replyTo: number; dispatched: readonly string[]; epic?: EventIssue }
> {
  const epicNumber = d.epic.number;
  const defaultBranch = await deps.defaultBranch();
  // Records, the epic branch's head, the pull request and the sub-issues in one request.
  const view = d.view ?? (await readView(deps.repo, epicNumber, defaultBranch));
  // The next views read the configured board along (its items and values come with them).
  expectBoard(deps.repo, d.config);
  const store = new GitHubStateStore({ repo: deps.repo, epic: String(epicNumber), defaultBranch });
  // The epic's sub-issues and comments are its owner's as much as ours (another login
  // may have opened it): found under either, created only when under neither.
  const doc = epicDocOf(store, view);
  const repo = epicRepo(deps.repo, doc);
  // The status and report comments came with the view: found without listing.
  if (view.issue?.comments !== undefined) repo.knowComments(epicNumber, view.issue.comments);
  if (view.pr?.comments !== undefined) repo.knowComments(view.pr.number, view.pr.comments);
  const now = deps.now().toISOString();
  // `/resume` applies the fixes ticked in the retro's comment first, then decides on them.
  if (
    d.trigger.kind === 'resume' &&
    (await applyRetroOnResume({ repo, store, epic: d.epic, config: d.config, now }))
  ) {
    const body = (await repo.getIssue(epicNumber)).body;
    return { again: d.trigger, replyTo: d.replyTo, dispatched: [], epic: { ...d.epic, body } };
  }
  const loaded = await loadPlan(
    repo,
    d.epic,
    d.config,
    view.issue === undefined ? undefined : { subIssues: view.issue.subIssues },
  );
  // Planning first: an epic without a plan may get one drafted (planning.ts).
  const planning = await planningStep({
    repo,
    store,
    view,
    epic: d.epic,
    config: d.config,
    trigger: d.trigger,
    command: d.command,
    by: d.by,
    planLoad: loaded,
    defaultBranch,
    storyWorkflow: deps.storyWorkflow,
    replyTo: d.replyTo,
    now,
  });
  if (planning.kind === 'conflict') return 'conflict';
  if (planning.kind === 'done') return planning.result;
  const planLoad = planning.load;
  const { plan } = planLoad;
  // The records of review rounds' `review-<n>` stories are read with the plan's own.
  const review = stateFromView(store, plan, view).doc?.value.review;
  const reviewed = withReviewStories(plan, review);
  if (d.command !== null) {
    const check = validateCommand(d.command, reviewed);
    if (!check.ok) {
      await repo.reply(d.replyTo, check.error);
      return { outcome: 'replied', epic: epicNumber, dispatched: [] };
    }
  }
  if (d.trigger.kind === 'edited') await clearViolations(repo, epicNumber);

  const branch = epicBranchName(String(epicNumber));
  // The merge walk reads only commits it has not seen, those its records name in one request.
  const state = stateFromView(store, reviewed, view);
  // A landed epic is delivered: nothing is started, opened or dispatched for it again.
  if (state.doc?.value.landed !== undefined) {
    return { outcome: 'ignored', reason: 'the epic has landed', epic: epicNumber, dispatched: [] };
  }
  if (d.command?.kind === 'retro') {
    return requestRetro({
      repo,
      store,
      epic: epicNumber,
      config: d.config,
      plan: reviewed,
      records: state.records,
      by: d.by ?? '',
      replyTo: d.replyTo,
      defaultBranch,
      storyWorkflow: deps.storyWorkflow,
      now,
    });
  }
  const landings = landingsOf(store, view);
  const merged = await repo.mergedStories(branch, {
    head: view.head,
    hints: Object.values(state.records).flatMap((r) => (r.mergeCommit ? [r.mergeCommit] : [])),
  });
  const pr =
    view.pr === undefined
      ? undefined
      : { number: view.pr.number, draft: view.pr.draft, checks: view.pr.checks };
  const active = Object.values(state.records).filter((r) => r.status === 'active').length;
  const runs = await strandedRuns(deps, {
    epic: epicNumber,
    defaultBranch,
    records: state.records,
    now,
  });
  const reportUrl = fullReportUrl(repo.htmlUrl, epicNumber);
  const decided = reconcile({
    epic: { number: epicNumber, title: d.epic.title },
    plan,
    records: state.records,
    merged,
    config: d.config,
    freeCoderSlots: coderSlots(d.config) - active,
    halt: state.halt,
    approvedPlan: state.doc?.value.approvedPlan,
    approvedStories: state.doc?.value.approvedStories,
    dispatchedRuns: runs,
    subIssues: planLoad.subIssues,
    pr,
    now,
    trigger: d.trigger,
    fullReportUrl: reportUrl,
    review,
    configPaths: planOptionsFor(d.config).configPaths,
    planning: planning.shown,
    ...(landings.length === 0 ? {} : { landings }),
    ...(deps.createsSubIssues === false ? { subIssuesPerDecision: 0 } : {}),
  });
  // Ready only with the default branch in it: else a landing first (docs/landing.md).
  const ready = decided.some((a) => a.kind === 'mark-pr-ready') && view.pr?.draft === true;
  const actions =
    ready && (await landBeforeReady(deps, { epic: epicNumber, defaultBranch }))
      ? decided.filter((a) => a.kind !== 'mark-pr-ready')
      : decided;
  const ctx: ApplyContext = {
    repo,
    store,
    epic: epicNumber,
    defaultBranch,
    storyWorkflow: deps.storyWorkflow,
    replyTo: d.replyTo,
    shas: { ...state.shas },
    subIssues: new Map(
      Object.entries(planLoad.subIssues).map(([id, s]) => [
        id,
        { number: s.number, nodeId: s.nodeId, state: s.state },
      ]),
    ),
    ...(planLoad.listed === undefined ? {} : { listedSubIssues: planLoad.listed }),
    title: d.epic.title,
    epicBranchMissing: view.head === null,
    prKnown: true,
    ...(view.pr?.draft === true ? { prNodeId: view.pr.nodeId } : {}),
    ...(view.pr === undefined ? {} : { prId: view.pr.nodeId }),
    pr,
    board: d.config.board?.project,
    // The board as the view read it, when it read the configured one.
    ...(view.board !== undefined && view.board.url === d.config.board?.project
      ? { boardRead: view.board }
      : {}),
    ...(pr === undefined ? {} : { reviewAnswers: new ReviewAnswers(repo, pr.number) }),
  };
  // The epic document's changes, the owner's claim with them: one write (one request at the label).
  const patch = epicDocPatch(actions, {
    claim:
      actions.length === 0
        ? undefined
        : ownerClaim({ doc, login: repo.botLogin, trigger: d.trigger, records: state.records }),
    planHashes: plan.hashes,
  });
  if (patch !== undefined) await updateEpicDoc(store, state.doc ?? { value: {}, sha: null }, patch);
  const applied = await applyActions(ctx, actions);
  if (applied.ok) {
    const reviewNow = actions.findLast((a) => a.kind === 'set-review');
    await ensureFullReport({
      store,
      epic: { number: epicNumber, title: d.epic.title },
      // With the review rounds' stories, this decision's round included.
      plan: withReviewStories(plan, reviewNow?.kind === 'set-review' ? reviewNow.review : review),
      records: state.records,
      merged,
      halt: state.halt,
      actions,
      url: reportUrl,
      repoHtmlUrl: repo.htmlUrl,
      currentSha: state.reportSha ?? null,
      ...(state.reportText === undefined ? {} : { currentText: state.reportText }),
      now,
      planning: planning.shown.report,
    });
  }
  if (applied.dispatched.length > 0) {
    deps.log?.info(`epic #${epicNumber}: dispatched ${applied.dispatched.join(', ')}`);
  }
  if (!applied.ok) {
    deps.log?.info(`epic #${epicNumber}: a story record changed meanwhile; deciding again`);
    return 'conflict';
  }
  await clearProblem({ ...deps, repo }, epicNumber, d.trigger);
  const queued = actions.find((a) => a.kind === 'start-queued-review');
  if (queued?.kind === 'start-queued-review' && pr !== undefined) {
    return {
      again: await reviewTrigger(repo, pr.number, queued.by),
      // The round's start is told on the pull request.
      replyTo: pr.number,
      dispatched: applied.dispatched,
    };
  }
  return { outcome: 'reconciled', epic: epicNumber, dispatched: applied.dispatched };
}

/** The epic's landings as the view read them (`land.json`); none when there is no file. */
function landingsOf(store: GitHubStateStore, view: EpicView): readonly LandRecord[] {
  if (view.landDoc === undefined) return [];
  const path = store.docPath(LAND_DOC);
  return readLandLog(store.parseJson<unknown>(LAND_DOC, view.landDoc.text), path).lands;
}

/**
 * For the active records dispatched longer than the grace period ago, what the story
 * workflow's runs say (one listing; none when no record is that old). A listing that
 * fails leaves them unjudged: the decision goes on, and a later one looks again.
 */
async function strandedRuns(
  deps: SettledDeps,
  input: {
    readonly epic: number;
    readonly defaultBranch: string;
    readonly records: Parameters<typeof overdueDispatches>[0];
    readonly now: string;
  },
): Promise<Record<string, DispatchedRun> | undefined> {
  const overdue = overdueDispatches(input.records, input.now);
  if (overdue.length === 0) return undefined;
  const workflow = deps.storyWorkflow;
  try {
    return await dispatchedRuns(deps.repo, {
      epic: input.epic,
      overdue,
      workflow,
      source: {
        repository: { fullName: deps.repo.fullName },
        workflowPath: `.github/workflows/${workflow}`,
        defaultBranch: input.defaultBranch,
      },
    });
  } catch (e) {
    if (!isEpicflowError(e, 'github')) throw e;
    deps.log?.warn(
      `epic #${input.epic}: cannot list the story runs to check ${overdue.map((o) => o.story).join(', ')}: ${describeError(e)}`,
    );
    return undefined;
  }
}
