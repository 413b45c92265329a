/**
 * Applies `reconcile`'s actions on GitHub, in order, each one idempotent.
 * `record` is a compare-and-swap against the version the decision read: when
 * someone wrote the record in between, the decision is stale, so the rest of
 * it (its dispatches above all) is dropped and the caller decides again.
 */
import type { GitHubRepo } from '../adapters/github/index.js';
import {
  ProjectBoard,
  type BoardValues as BoardCells,
  type GitHubStateStore,
} from '../adapters/github/index.js';
import type { Action, BoardValues, MarkerName } from '../core/epic/index.js';
import { markerComment } from '../core/epic/index.js';
import { EpicflowError } from '../core/errors.js';
import type { StoryStatus } from '../core/model.js';
import type { EpicDoc } from './load.js';
import { EPIC_DOC } from './load.js';
import { rememberRun } from './runs.js';

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
  /** Sub-issues by story id (number and node id), completed as they are created. */
  readonly subIssues: Map<string, { number: number; nodeId: string }>;
  pr: { number: number; draft: boolean } | undefined;
  /** The configured board URL, if any. */
  readonly board: string | undefined;
}

export type ApplyResult =
  | { readonly ok: true; readonly dispatched: readonly string[] }
  /** A record changed under us: decide again. */
  | { readonly ok: false; readonly dispatched: readonly string[] };

export async function applyActions(
  ctx: ApplyContext,
  actions: readonly Action[],
): Promise<ApplyResult> {
  const dispatched: string[] = [];
  const board: { story: string; values: BoardValues }[] = [];
  const { repo, store, epic } = ctx;
  for (const action of actions) {
    if (action.kind !== 'update-board' && board.length > 0) {
      await updateBoard(ctx, board.splice(0));
    }
    switch (action.kind) {
      case 'set-halt':
        await store.updateJson<EpicDoc>(EPIC_DOC, (cur) => ({ ...(cur ?? {}), halt: action.halt }));
        break;
      case 'clear-halt':
        await store.updateJson<EpicDoc>(EPIC_DOC, (cur) => {
          const { halt: _h, ...rest } = cur ?? {};
          return rest;
        });
        break;
      case 'reply':
        await repo.reply(ctx.replyTo, action.body);
        break;
      case 'ensure-epic-branch': {
        const head = await repo.getBranchSha(ctx.defaultBranch);
        if (head === null) {
          throw new EpicflowError(
            'github',
            `GitHub: ${repo.fullName} has no commit on ${ctx.defaultBranch} to start ${action.branch} from`,
          );
        }
        await repo.ensureBranch(action.branch, head);
        break;
      }
      case 'ensure-draft-pr': {
        // GitHub refuses a pull request without commits: until the first story merges the
        // epic branch equals the default branch, so the pull request is opened then.
        const pr = await repo.ensureDraftPr({ ...action, base: ctx.defaultBranch });
        if (pr.action !== 'no-commits') ctx.pr = { number: pr.number, draft: pr.draft };
        break;
      }
      case 'ensure-sub-issue': {
        const issue = await repo.ensureSubIssue({
          parent: epic,
          storyId: action.story,
          title: action.title,
          body: bodyWithout(action.body, action.marker),
        });
        ctx.subIssues.set(action.story, { number: issue.number, nodeId: issue.nodeId });
        break;
      }
      case 'close-sub-issue':
      case 'reopen-sub-issue': {
        const sub = ctx.subIssues.get(action.story);
        if (sub === undefined) break;
        if (action.kind === 'close-sub-issue') await repo.closeIssue(sub.number);
        else await repo.reopenIssue(sub.number);
        break;
      }
      case 'comment-sub-issue-failure': {
        const sub = ctx.subIssues.get(action.story);
        if (sub === undefined) break;
        await repo.ensureComment({
          issueNumber: sub.number,
          marker: action.marker,
          body: bodyWithout(action.body, action.marker),
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
        // Inputs are ids only (PRODUCT §9.2): the job reads everything else from the
        // record just written (a fresh start shows as a record without a story branch
        // of the current plan hash).
        const run = await repo.dispatchWorkflow({
          workflow: ctx.storyWorkflow,
          ref: ctx.defaultBranch,
          inputs: { epic: String(epic), story: action.story, attempt: String(action.attempt) },
        });
        dispatched.push(`${action.story}#${action.attempt}`);
        if (run.runId !== null) {
          await rememberRun(repo, run.runId, {
            epic,
            story: action.story,
            attempt: action.attempt,
          });
        }
        break;
      }
      case 'update-board':
        if (ctx.board !== undefined) board.push({ story: action.story, values: action.values });
        break;
      case 'ensure-status-comment':
        await repo.ensureComment({
          issueNumber: epic,
          marker: action.marker,
          body: bodyWithout(action.body, action.marker),
        });
        break;
      case 'ensure-report-comment':
        // The report lives on the pull request, which exists once the first story merged.
        if (ctx.pr === undefined) break;
        await repo.ensureComment({
          issueNumber: ctx.pr.number,
          marker: action.marker,
          body: bodyWithout(action.body, action.marker),
        });
        break;
      case 'mark-pr-ready':
        if (ctx.pr?.draft === true) {
          await repo.markReadyForReview(ctx.pr.number);
          ctx.pr = { ...ctx.pr, draft: false };
        }
        break;
      case 'finish':
        break;
    }
  }
  if (board.length > 0) await updateBoard(ctx, board);
  return { ok: true, dispatched };
}

/**
 * The core renders bodies with their marker; the adapter adds it again when it
 * writes, so it is taken off here (one marker per body, found the same way).
 */
function bodyWithout(body: string, marker: MarkerName): string {
  return body.split(markerComment(marker)).join('').trimEnd();
}

const STATUS_OF: Readonly<Record<BoardValues['Status'], StoryStatus>> = {
  Planned: 'planned',
  Active: 'active',
  Waiting: 'waiting',
  Done: 'done',
  Failed: 'failed',
};

/** All of a decision's board cells at once: one read of the items, batched writes. */
async function updateBoard(
  ctx: ApplyContext,
  updates: readonly { story: string; values: BoardValues }[],
): Promise<void> {
  if (ctx.board === undefined) return;
  const withIssue = updates.flatMap((u) => {
    const sub = ctx.subIssues.get(u.story);
    return sub === undefined ? [] : [{ ...u, nodeId: sub.nodeId }];
  });
  if (withIssue.length === 0) return;
  const board = await ProjectBoard.open(ctx.repo.octokit, ctx.board);
  const items = await board.ensureItems(withIssue.map((u) => u.nodeId));
  const writes = withIssue.flatMap((u) => {
    const itemId = items.get(u.nodeId);
    return itemId === undefined ? [] : [{ itemId, values: cells(u.values) }];
  });
  await board.updateMany(writes);
}

function cells(v: BoardValues): BoardCells {
  return {
    status: STATUS_OF[v.Status],
    wave: v.Wave,
    tokens: v.Tokens,
    // An empty cell stays empty: writing '' or clearing again would cost a write each time.
    ...(v.Executor === '' ? {} : { executor: v.Executor }),
    ...(v.Cost === null ? {} : { cost: v.Cost }),
  };
}
