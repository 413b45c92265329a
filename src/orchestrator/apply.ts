/**
 * Applies `reconcile`'s actions on GitHub, in order, each one idempotent (the
 * epic document's are written before, in one write: see epic-doc.ts).
 * `record` is a compare-and-swap against the version the decision read: when
 * someone wrote the record in between, the decision is stale, so the rest of
 * it (its dispatches above all) is dropped and the caller decides again.
 */
import type { GitHubRepo, IssueSummary } from '../adapters/github/index.js';
import {
  CONFIG_PATH,
  cellsOf,
  type BoardRead,
  type ProjectBoard,
  type GitHubStateStore,
} from '../adapters/github/index.js';
import { isTransient, lackingPermission, statusOf } from '../adapters/github/errors.js';
import {
  jobInputs,
  oneLineText,
  sameButForTime,
  type Action,
  type BoardValues,
} from '../core/epic/index.js';
// The core renders bodies with their marker; the adapter adds it again when it writes.
import { withoutMarker } from '../core/epic/markers.js';
import { EpicflowError } from '../core/errors.js';
import type { StoryRecord } from '../core/model.js';
import type { ReviewAnswers } from './review.js';

export interface ApplyContext {
  readonly repo: GitHubRepo;
  readonly store: GitHubStateStore;
  readonly epic: number;
  readonly defaultBranch: string;
  readonly storyWorkflow: string;
  /** Where a `reply` goes: the issue or pull request that carried the command. */
  readonly replyTo: number;
  /** Record CAS tokens as read; updated as records are written. */
  readonly shas: Record<string, string | null>;
  /** Sub-issues by story id (number, node id, state when known), completed as they are created. */
  readonly subIssues: Map<string, { number: number; nodeId: string; state?: 'open' | 'closed' }>;
  /** The epic's sub-issues as this decision listed them (spares a listing per story). */
  readonly listedSubIssues?: readonly IssueSummary[];
  /** The epic's title, for the epic branch's start commit. */
  readonly title?: string;
  /** The decision read that the epic branch does not exist. */
  readonly epicBranchMissing?: boolean;
  /** `pr` is what the decision read (undefined: no open pull request), not a guess. */
  readonly prKnown?: boolean;
  /** Node id of `pr` as the decision read it (a draft then). */
  readonly prNodeId?: string;
  /** Node id of `pr` as the decision read it, draft or not. */
  readonly prId?: string;
  pr: { number: number; draft: boolean } | undefined;
  /** The configured board URL, if any. */
  readonly board: string | undefined;
  /** The board with the sub-issues' items, as this decision's view read it. */
  readonly boardRead?: BoardRead;
  /** Answers review comments on the pull request (there is one). */
  readonly reviewAnswers?: ReviewAnswers;
}

type ApplyResult =
  | { readonly ok: true; readonly dispatched: readonly string[] }
  /** A record changed under us: decide again. */
  | { readonly ok: false; readonly dispatched: readonly string[] };

export async function applyActions(
  ctx: ApplyContext,
  actions: readonly Action[],
): Promise<ApplyResult> {
  const progress = { at: -1 };
  try {
    return await applyInOrder(ctx, actions, progress);
  } catch (e) {
    const failed = actions[progress.at];
    if (failed?.kind !== 'dispatch' || isTransient(e)) throw e;
    await unstart(ctx, actions.slice(0, progress.at), failed);
    throw refusedDispatch(ctx, e);
  }
}

/** GitHub knows no such workflow (404): say which file must be where. */
function refusedDispatch(ctx: ApplyContext, e: unknown): unknown {
  if (statusOf(e instanceof EpicflowError ? e.cause : e) !== 404) return e;
  const path = `.github/workflows/${ctx.storyWorkflow}`;
  return new EpicflowError(
    'config',
    `the story workflow ${path} was not found on ${ctx.defaultBranch}: epicflow starts each story by dispatching it`,
    {
      details: [
        ...(e instanceof EpicflowError ? [e.message, ...e.details] : []),
        `add ${path} (with the inputs epic, story and attempt) to ${ctx.defaultBranch}, as the App's setup guide shows`,
      ],
      cause: e,
    },
  );
}

async function applyInOrder(
  ctx: ApplyContext,
  actions: readonly Action[],
  /** Index of the action being applied, for the caller to know which one failed. */
  progress: { at: number },
): Promise<ApplyResult> {
  const dispatched: string[] = [];
  const board: { story: string; values: BoardValues }[] = [];
  const { repo, store, epic } = ctx;
  // Our recent issues, listed at most once per decision (orphans of a crash are found there).
  let recentIssues: Promise<IssueSummary[]> | undefined;
  const recent = (): Promise<IssueSummary[]> => (recentIssues ??= repo.recentIssues());
  const project = await openBoard(ctx, actions);
  for (const [at, action] of actions.entries()) {
    progress.at = at;
    if (action.kind !== 'update-board' && board.length > 0 && project !== undefined) {
      await updateBoard(ctx, project, board.splice(0));
    }
    switch (action.kind) {
      case 'approve-plan':
      case 'set-halt':
      case 'clear-halt':
      case 'set-review':
        // Written before, with the decision's other changes of the epic document, in
        // one write (see epic-doc.ts).
        break;
      case 'reply':
        await repo.reply(ctx.replyTo, action.body);
        break;
      case 'ensure-epic-branch':
        // One empty start commit: GitHub refuses a pull request without commits, and
        // with it the draft pull request opens now rather than at the first merge.
        await repo.ensureBranchWithCommit({
          name: action.branch,
          fromBranch: ctx.defaultBranch,
          message: startMessage(epic, ctx.title),
          ...(ctx.epicBranchMissing === true ? { missing: true } : {}),
        });
        break;
      case 'ensure-draft-pr': {
        // An epic branch made before start commits existed may still equal the default
        // branch: then the pull request opens at the first merge.
        const pr = await repo.ensureDraftPr({
          ...action,
          base: ctx.defaultBranch,
          // The decision read that none is open (it would not ask otherwise).
          ...(ctx.prKnown === true && ctx.pr === undefined ? { missing: true } : {}),
        });
        if (pr.action !== 'no-commits') ctx.pr = { number: pr.number, draft: pr.draft };
        break;
      }
      case 'ensure-sub-issue': {
        const listed = ctx.listedSubIssues;
        const issue = await repo.ensureSubIssue({
          parent: epic,
          storyId: action.story,
          title: action.title,
          body: withoutMarker(action.body, action.marker),
          ...(listed === undefined ? {} : { known: { subIssues: listed, recent } }),
        });
        ctx.subIssues.set(action.story, {
          number: issue.number,
          nodeId: issue.nodeId,
          state: issue.state,
        });
        break;
      }
      case 'close-sub-issue':
      case 'reopen-sub-issue': {
        const sub = ctx.subIssues.get(action.story);
        if (sub === undefined) break;
        if (action.kind === 'close-sub-issue') await repo.closeIssue(sub.number, sub.state);
        else await repo.reopenIssue(sub.number, sub.state);
        ctx.subIssues.set(action.story, {
          ...sub,
          state: action.kind === 'close-sub-issue' ? 'closed' : 'open',
        });
        break;
      }
      case 'comment-sub-issue-failure': {
        const sub = ctx.subIssues.get(action.story);
        if (sub === undefined) break;
        await repo.ensureComment({
          issueNumber: sub.number,
          marker: action.marker,
          body: withoutMarker(action.body, action.marker),
        });
        break;
      }
      case 'record': {
        const id = action.record.story;
        const written = await store.write(action.record, ctx.shas[id] ?? null);
        if (!written.ok) return { ok: false, dispatched };
        ctx.shas[id] = written.sha;
        break;
      }
      case 'dispatch': {
        // Inputs are ids only (docs/security.md): the job reads everything else from the
        // record just written (a fresh start shows as a record without a story branch
        // of the current plan hash). The run needs no note of its story: the workflow's
        // `run-name` carries these ids into the run's title, which `handleRun` reads back.
        await repo.dispatchWorkflow({
          workflow: ctx.storyWorkflow,
          ref: ctx.defaultBranch,
          inputs: jobInputs({ kind: 'story', epic, story: action.story, attempt: action.attempt }),
        });
        dispatched.push(`${action.story}#${action.attempt}`);
        break;
      }
      case 'update-board':
        if (ctx.board !== undefined) board.push({ story: action.story, values: action.values });
        break;
      case 'ensure-status-comment':
        await repo.ensureComment({
          issueNumber: epic,
          marker: action.marker,
          body: withoutMarker(action.body, action.marker),
          same: sameButForTime,
        });
        break;
      case 'ensure-report-comment':
        // The report lives on the pull request, which exists once the first story merged.
        if (ctx.pr === undefined) break;
        await repo.ensureComment({
          issueNumber: ctx.pr.number,
          marker: action.marker,
          body: withoutMarker(action.body, action.marker),
          same: sameButForTime,
        });
        break;
      case 'mark-pr-draft':
        if (ctx.pr?.draft === false && ctx.prId !== undefined) {
          await repo.convertToDraft(ctx.pr.number, ctx.prId);
          ctx.pr = { ...ctx.pr, draft: true };
        }
        break;
      case 'mark-pr-ready':
        if (ctx.pr?.draft === true) {
          await repo.markReadyForReview(ctx.pr.number, ctx.prNodeId);
          ctx.pr = { ...ctx.pr, draft: false };
        }
        break;
      case 'answer-review':
        await ctx.reviewAnswers?.answer(action.answer);
        break;
      case 'start-queued-review':
      case 'finish':
        break;
    }
  }
  if (board.length > 0 && project !== undefined) await updateBoard(ctx, project, board);
  return { ok: true, dispatched };
}

/**
 * The configured board, resolved before the decision's first write: a project that
 * does not exist, or that the App may not use, then stops the decision before the
 * epic branch, the pull request or a sub-issue is created, not after.
 */
async function openBoard(
  ctx: ApplyContext,
  actions: readonly Action[],
): Promise<ProjectBoard | undefined> {
  if (ctx.board === undefined || !actions.some((a) => a.kind === 'update-board')) return undefined;
  try {
    // The known sub-issues' items and cells come with the board, in the same read.
    return await ctx.repo.openBoard(ctx.board, {
      contents: [...ctx.subIssues.values()].map((s) => s.nodeId),
      ...(ctx.boardRead === undefined ? {} : { read: ctx.boardRead }),
    });
  } catch (e) {
    if (isTransient(e)) throw e;
    const answer = e instanceof EpicflowError ? [e.message, ...e.details] : [String(e)];
    throw new EpicflowError(
      lackingPermission(e) === undefined ? 'config' : 'github',
      `board.project in ${CONFIG_PATH}: epicflow cannot use the project board ${ctx.board}`,
      {
        details: [
          ...answer,
          'create the project, or set board.project to the URL of an existing project (or remove board)',
        ],
        cause: e,
      },
    );
  }
}

/**
 * GitHub refused a dispatch (no Actions permission, no such workflow), so no job runs:
 * the record written for it goes back to planned, and the story starts with the same
 * attempt once the cause is fixed, instead of showing as running forever. A dispatch
 * that may have happened (a 5xx, a dropped answer) is left as written.
 */
async function unstart(
  ctx: ApplyContext,
  before: readonly Action[],
  dispatch: Extract<Action, { kind: 'dispatch' }>,
): Promise<void> {
  const written = [...before]
    .reverse()
    .find((a) => a.kind === 'record' && a.record.story === dispatch.story);
  if (written?.kind !== 'record') return;
  const { startedAt, ...rest } = written.record;
  // A fresh start never started (launch takes its attempt as is); a continued one
  // had started (launch counts the attempt up again).
  const record: StoryRecord = dispatch.fresh
    ? { ...rest, status: 'planned' }
    : {
        ...rest,
        status: 'planned',
        attempt: dispatch.attempt - 1,
        ...(startedAt === undefined ? {} : { startedAt }),
      };
  try {
    const result = await ctx.store.write(record, ctx.shas[dispatch.story] ?? null);
    if (result.ok) ctx.shas[dispatch.story] = result.sha;
  } catch {
    // The refused dispatch is the error to report; a record left active shows it too.
  }
}

/** `Start epic #12: Checkout` — one line, whatever the title holds. */
function startMessage(epic: number, title: string | undefined): string {
  const line = oneLineText(title ?? '');
  return line === '' ? `Start epic #${epic}` : `Start epic #${epic}: ${line}`;
}

/** All of a decision's board cells at once: one read of the items, batched writes. */
async function updateBoard(
  ctx: ApplyContext,
  board: ProjectBoard,
  updates: readonly { story: string; values: BoardValues }[],
): Promise<void> {
  const withIssue = updates.flatMap((u) => {
    const sub = ctx.subIssues.get(u.story);
    return sub === undefined ? [] : [{ ...u, nodeId: sub.nodeId }];
  });
  if (withIssue.length === 0) return;
  const items = await board.ensureItems(withIssue.map((u) => u.nodeId));
  const writes = withIssue.flatMap((u) => {
    const itemId = items.get(u.nodeId);
    return itemId === undefined ? [] : [{ itemId, values: cellsOf(u.values) }];
  });
  await board.updateMany(writes);
}
