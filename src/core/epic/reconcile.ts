/**
 * The pure decision at the heart of the App and the Action (docs/commands.md):
 * given everything durable about an epic and the event that woke us, say what
 * to do, as a list of actions the adapter applies in order. Nothing here
 * remembers anything: state lives in GitHub (epic branch, story records,
 * sub-issues, comments), so every decision can be made again from scratch,
 * and making it twice with the same state does the same thing once.
 *
 * Idempotency comes from the records: a story is marked `active` with attempt
 * N (a `record` action) right before its `dispatch`, so the next decision sees
 * it running and never dispatches attempt N again.
 */
import type { Halt, HaltKind, StoryRecord, StoryStatus } from '../model.js';
import { epicBranchName } from '../model.js';
import type { ReportStory } from '../report/index.js';
import type { Hold, SchedulerDecision } from '../scheduler/index.js';
import { schedule } from '../scheduler/index.js';
import { boardStatusOf, boardValues } from './board-values.js';
import { reportRow } from './report-rows.js';
import { attemptOf, budgetHalt, heldRecord, releasedRecord } from './rules.js';
import { describeUnapproved, planApproval, type PlanApproval } from './approval.js';
import { PLAN_PROPOSED_TEXT } from './planning.js';
import { validateCommand } from './commands.js';
import { PLAN_CHANGED_NOTE, renderReportComment, renderStatusComment } from './comments.js';
import { REPORT_MARKER, STATUS_MARKER, storyMarker } from './markers.js';
import type { Entry } from './story-state.js';
import {
  applyTrigger,
  epicIdOf,
  login,
  newRecord,
  sameRecord,
  settle,
  statusOf,
} from './story-state.js';
import { renderFailureComment, renderPullRequest, renderSubIssue } from './texts.js';
import type { Action, ReconcileInput } from './types.js';
import { applyReviewRound, reviewEnd, reviewStart } from './review-state.js';
import { supersededMerge } from './review.js';
import { applyDeferredRound, deferredOffer } from './deferred.js';
import { nextStepText } from './next-step.js';

/** Halts a `/resume` lifts; a spent budget or an exhausted roster must lift by themselves. */
const LIFTED_BY_RESUME: ReadonlySet<HaltKind> = new Set([
  'cancel',
  'outside-change',
  'interrupted',
  'land-failed',
  'pr-closed',
]);

/**
 * The one epic state machine, shared by the GitHub reconcile and the local run: every
 * story settled against the epic branch (merged wins), the trigger applied (commands, a
 * finished run, a rerun), the halt (persisted, from the trigger, an unapproved plan, a
 * spent budget), and the scheduler's holds, releases and starts. The entries carry each
 * story's record as it must be after the decision; launches are not applied yet.
 */
interface StoryDecision {
  readonly entries: Entry[];
  readonly decision: SchedulerDecision;
  readonly halt: Halt | undefined;
  /** The hold of a plan nobody with write permission approved (it is also `halt`, or behind it). */
  readonly held: Halt | undefined;
  readonly approval: PlanApproval;
  /** Short answers to the command that triggered the decision. */
  readonly replies: readonly string[];
  /** Approval and halt changes to persist, in order: before any start they allow. */
  readonly stateActions: readonly Action[];
  /** A review round's answers and a queued round's start (core/epic/review-state.ts). */
  readonly reviewActions: readonly Action[];
}

export function decideStories(given: ReconcileInput): StoryDecision {
  const stateActions: Action[] = [];
  const replies: string[] = [];
  // Review rounds add their `review-<n>` stories to the plan; approval is of the plan's own.
  const review = reviewStart(given);
  stateActions.push(...review.actions);
  replies.push(...review.replies);
  const input = review.plan === given.plan ? given : { ...given, plan: review.plan };
  const approval = planApproval({
    plan: given.plan,
    approvedPlan: input.approvedPlan,
    approvedStories: input.approvedStories,
    trigger: input.trigger,
  });
  // First, before any dispatch it allows, so a start never runs ahead of its approval.
  if (approval.kind === 'approve') {
    stateActions.push({ kind: 'approve-plan', plan: approval.plan });
  }
  let halt = haltFromTrigger(input, stateActions);
  // A persisted halt still shows first; an unapproved plan starts nothing either way.
  const held = approval.kind === 'hold' ? approval.halt : undefined;
  halt ??= held;

  const waveOf = new Map<string, number>();
  input.plan.waves.forEach((ids, i) => ids.forEach((id) => waveOf.set(id, i + 1)));
  const entries = input.plan.stories.map((story) =>
    settle(input, {
      story,
      wave: waveOf.get(story.id) ?? 1,
      hash: input.plan.hashes[story.id] ?? '',
      mergeCommit: supersededMerge(input.records[story.id], input.merged.get(story.id))
        ? undefined
        : input.merged.get(story.id),
      prior: input.records[story.id],
      current: input.records[story.id],
      display: [],
    }),
  );
  for (const entry of entries) applyTrigger(input, entry, replies);
  if (input.trigger.kind === 'deferred') applyDeferredRound(entries, input.trigger.by, replies);
  if (review.round !== undefined) applyReviewRound(input, entries, review.round);
  const { trigger } = input;
  if ((trigger.kind === 'retry' || trigger.kind === 'skip') && !input.plan.hashes[trigger.story]) {
    // Normally caught by validateCommand; the plan may have changed in between.
    const check = validateCommand(trigger, input.plan);
    if (!check.ok) replies.push(check.error);
  }
  halt ??= budgetHalt(input.config, Object.values(input.records));
  const decision = scheduleStories(input, entries, halt);
  const reviewActions = reviewEnd(input, entries, review.doc);
  return { entries, decision, halt, held, approval, replies, stateActions, reviewActions };
}

export function reconcile(input: ReconcileInput): Action[] {
  const { entries, decision, halt, held, approval, replies, stateActions, reviewActions } =
    decideStories(input);
  const actions: Action[] = [...stateActions];
  for (const body of replies) actions.push({ kind: 'reply', body });
  const starting = new Set(decision.start);
  const { branch, subIssues } = structureActions(
    input,
    entries,
    held === undefined,
    starting,
    halt,
  );
  // The ready stories are dispatched before sub-issues are created (at most a few per
  // decision): the first job starts within seconds of the label, not after every write.
  actions.push(...branch);
  actions.push(...launchActions(input, entries, starting));
  actions.push(...subIssues);
  actions.push(...subIssueActions(input, entries, decision.hold));
  if (input.config.board !== undefined) {
    for (const e of entries) {
      const values = boardValues({
        wave: e.wave,
        record: e.current,
        merged: e.mergeCommit !== undefined,
      });
      actions.push({
        kind: 'update-board',
        story: e.story.id,
        values: { ...values, Status: boardStatusOf(statusOf(e)) },
      });
    }
  }
  const allDone = entries.every((e) => statusOf(e) === 'done');
  actions.push(
    ...commentActions(input, entries, {
      halt,
      allDone,
      summary: decision.summary,
      unapproved: held,
      notApproved:
        approval.kind !== 'hold'
          ? undefined
          : input.planning?.proposed === true
            ? PLAN_PROPOSED_TEXT
            : describeUnapproved(approval),
    }),
  );
  actions.push(...reviewActions);
  if (allDone) {
    if (input.pr?.draft !== false) actions.push({ kind: 'mark-pr-ready' });
    actions.push({ kind: 'finish' });
  }
  return actions;
}

/** `/cancel` sets a halt, `/resume` lifts the ones people may lift; otherwise the input's. */
function haltFromTrigger(input: ReconcileInput, actions: Action[]): Halt | undefined {
  const { trigger, halt } = input;
  if (trigger.kind === 'cancel') {
    const cancel: Halt = { kind: 'cancel', message: `cancelled by @${login(trigger.by)}` };
    actions.push({ kind: 'set-halt', halt: cancel });
    return cancel;
  }
  if (trigger.kind === 'resume' && halt !== undefined && LIFTED_BY_RESUME.has(halt.kind)) {
    actions.push({ kind: 'clear-halt' });
    return undefined;
  }
  return halt;
}

/** Runs the scheduler and records its holds and releases on the entries. */
function scheduleStories(
  input: ReconcileInput,
  entries: readonly Entry[],
  halt: Halt | undefined,
): SchedulerDecision {
  const status: Record<string, StoryStatus> = {};
  for (const e of entries) status[e.story.id] = statusOf(e);
  // A story found finished in this decision (its job died, or its merge is on the
  // branch before its record says so) gives back the slot the caller counted as busy.
  const released = entries.filter(
    (e) =>
      e.prior?.status === 'active' &&
      (status[e.story.id] === 'done' || status[e.story.id] === 'failed'),
  ).length;
  const decision = schedule({
    stories: input.plan.stories,
    status,
    concurrency: input.config.concurrency,
    freeCoderSlots: input.freeCoderSlots + released,
    ...(halt === undefined ? {} : { halt }),
    ...(input.failFast === true ? { failFast: true } : {}),
  });
  const byId = new Map(entries.map((e) => [e.story.id, e]));
  for (const { id, reason } of decision.hold) {
    const e = byId.get(id);
    if (e === undefined) continue;
    if (e.current?.status === 'waiting' && input.ownWaitingReasons?.has(id) === true) continue;
    e.current = heldRecord(e.current ?? newRecord(epicIdOf(input), e), reason);
  }
  for (const id of decision.release) {
    const e = byId.get(id);
    if (e?.current !== undefined) e.current = releasedRecord(e.current);
  }
  return decision;
}

/**
 * The epic branch, the draft pull request and the sub-issues, when missing. A
 * plan nobody with write permission approved gets no new sub-issues: their
 * text would be the unapproved stories'.
 */
function structureActions(
  input: ReconcileInput,
  entries: readonly Entry[],
  approved: boolean,
  starting: ReadonlySet<string>,
  halt: Halt | undefined,
): { branch: Action[]; subIssues: Action[] } {
  const actions: Action[] = [];
  const branch = epicBranchName(epicIdOf(input));
  // A pull request people closed is not opened again behind their back (`/resume` does).
  if (input.pr === undefined && halt?.kind !== 'pr-closed') {
    actions.push({ kind: 'ensure-epic-branch', branch });
    actions.push({ kind: 'ensure-draft-pr', head: branch, ...renderPullRequest(input.epic) });
  }
  const missing = approved ? entries.filter((e) => input.subIssues[e.story.id] === undefined) : [];
  // The stories starting now first, then plan order; the rest in the next decisions.
  const next = [
    ...missing.filter((e) => starting.has(e.story.id)),
    ...missing.filter((e) => !starting.has(e.story.id)),
  ].slice(0, input.subIssuesPerDecision ?? SUB_ISSUES_PER_DECISION);
  const subIssues = next.map((e): Action => {
    const text = renderSubIssue(input.epic.number, e.story, e.wave);
    return {
      kind: 'ensure-sub-issue',
      story: e.story.id,
      marker: storyMarker(e.story.id),
      ...text,
    };
  });
  return { branch: actions, subIssues };
}

/**
 * Sub-issues created by one decision (two content-creating requests each: the issue and
 * its link). GitHub allows 80 content-creating requests a minute and 500 an hour; spread
 * over the epic's decisions, a large plan's sub-issues neither hold up the first dispatch
 * nor meet the limit.
 */
export const SUB_ISSUES_PER_DECISION = 10;

/**
 * Changed records, then each start as `record active` + `dispatch` (plan
 * order, so a redelivered event dispatches in the same order). A started
 * story continues on its branch with the next attempt; a never-started one
 * uses its recorded attempt; either starts fresh when its plan entry changed.
 *
 * The job reads only the record (dispatch inputs are ids), and the record
 * carries the new plan hash, so a changed entry is told to it by the
 * `restart` marker: the job then sets the old story branch aside. The marker
 * stays until a job honours it (its records drop it), so a job that died
 * first leaves it for the next start.
 */
function launchActions(
  input: ReconcileInput,
  entries: readonly Entry[],
  starting: ReadonlySet<string>,
): Action[] {
  const actions: Action[] = [];
  for (const e of entries) {
    if (starting.has(e.story.id) || e.current === undefined) continue;
    if (!sameRecord(e.prior, e.current)) actions.push({ kind: 'record', record: e.current });
  }
  for (const e of entries) {
    if (!starting.has(e.story.id)) continue;
    const prior = e.current;
    const started = prior?.startedAt !== undefined;
    const attempt = attemptOf(prior, e.hash);
    const restart =
      prior !== undefined &&
      (prior.restart === 'fresh' || (prior.planHash !== e.hash && hadStarted(prior)));
    const fresh = !started || restart;
    const base = prior ?? newRecord(epicIdOf(input), e);
    const { reason: _r, finishedAt: _f, mergeCommit: _m, restart: _s, ...rest } = base;
    e.current = {
      ...rest,
      status: 'active',
      attempt,
      planHash: e.hash,
      startedAt: input.now,
      ...(restart ? { restart: 'fresh' as const } : {}),
    };
    actions.push({ kind: 'record', record: e.current });
    if (input.subIssues[e.story.id]?.state === 'closed') {
      actions.push({ kind: 'reopen-sub-issue', story: e.story.id });
    }
    actions.push({ kind: 'dispatch', story: e.story.id, attempt, fresh });
  }
  return actions;
}

/**
 * Whether a story ever started, so it may have a branch. A restart on
 * `/resume` drops `startedAt` but raises the attempt, and only a start (or a
 * restart after one) ever raises it.
 */
function hadStarted(record: StoryRecord): boolean {
  return record.startedAt !== undefined || record.attempt > 1;
}

/** Done stories close their sub-issue; failed ones get (or keep) one comment per attempt. */
function subIssueActions(
  input: ReconcileInput,
  entries: readonly Entry[],
  holds: readonly Hold[],
): Action[] {
  const actions: Action[] = [];
  for (const e of entries) {
    if (statusOf(e) === 'done' && input.subIssues[e.story.id]?.state !== 'closed') {
      actions.push({ kind: 'close-sub-issue', story: e.story.id });
    }
  }
  for (const e of entries) {
    if (statusOf(e) !== 'failed') continue;
    const story = e.story.id;
    const attempt = e.current?.attempt ?? 1;
    const reason = e.derivedFailure ?? e.current?.reason ?? '';
    const waiting = holds.filter((h) => h.reason === `waiting for ${story}`).map((h) => h.id);
    const comment = renderFailureComment({
      epic: input.epic.number,
      story,
      attempt,
      reason,
      waiting,
    });
    actions.push({ kind: 'comment-sub-issue-failure', story, attempt, reason, ...comment });
  }
  return actions;
}

/** The status comment on the issue and the report comment on the pull request. */
function commentActions(
  input: ReconcileInput,
  entries: readonly Entry[],
  facts: {
    readonly halt: Halt | undefined;
    readonly allDone: boolean;
    readonly summary: string;
    readonly unapproved: Halt | undefined;
    /** What is not approved yet (markdown), while the plan is held for approval. */
    readonly notApproved: string | undefined;
  },
): Action[] {
  const { halt, allDone } = facts;
  const stories = reportStories(entries, epicIdOf(input));
  const nextStep = nextStepText({
    allDone,
    halt,
    unapproved: facts.unapproved,
    pr: input.pr,
    now: input.now,
    failed: entries.filter((e) => statusOf(e) === 'failed').map((e) => e.story.id),
    running: entries.filter((e) => statusOf(e) === 'active').length,
    changed: entries.some((e) => e.display.includes(PLAN_CHANGED_NOTE)),
    proposed: input.planning?.proposed === true,
    deferred: deferredOffer(entries),
  });
  const status = renderStatusComment({
    epic: input.epic,
    stories,
    summary: allDone ? `all ${entries.length} stories done` : facts.summary,
    halt,
    pr: input.pr,
    notApproved: facts.notApproved,
    nextStep,
    now: input.now,
  });
  const report = renderReportComment({
    epic: input.epic,
    stories,
    halts: halt === undefined ? [] : [halt],
    now: input.now,
    startedAt: earliest(entries.map((e) => e.current?.startedAt)),
    nextStep,
    links: input.links,
    fullReportUrl: input.fullReportUrl,
    planning: input.planning?.report,
    landings: input.landings,
  });
  return [
    { kind: 'ensure-status-comment', marker: STATUS_MARKER, body: status },
    { kind: 'ensure-report-comment', marker: REPORT_MARKER, body: report, rows: stories },
  ];
}

/** The stories as the comments show them (one row rule for every report: `reportRow`). */
function reportStories(entries: readonly Entry[], epic: string): ReportStory[] {
  return entries.map((e) =>
    reportRow({
      epic,
      story: e.story,
      wave: e.wave,
      hash: e.hash,
      record: e.current,
      mergeCommit: e.mergeCommit ?? null,
      derivedFailure: e.derivedFailure,
      display: e.display,
    }),
  );
}

function earliest(times: readonly (string | undefined)[]): string | undefined {
  const known = times.filter((t): t is string => t !== undefined).sort();
  return known[0];
}
