/**
 * A retro on GitHub, the App's side (docs/commands.md): `/retro` records an attempt on
 * the state branch (compare-and-swap) and dispatches the story workflow with the
 * reserved story `_retro`, whose job (retro-job.ts) proposes the fixes in one comment on
 * the epic issue, a checkbox per fix. `/resume` first applies the fixes ticked there:
 * their outcomes are recorded first (compare-and-swap, so none is applied twice), then
 * plan edits go into the issue's plan, retry notes into the story records, and the
 * comment is marked; then the epic is decided with the plan as edited.
 */
import type { GitHubRepo, GitHubStateStore } from '../adapters/github/index.js';
import type { EpicflowConfig } from '../core/config/index.js';
import { failIfOwned } from '../core/epic/index.js';
import { RETRO_MARKER } from '../core/epic/markers.js';
import { EpicflowError } from '../core/errors.js';
import type { Plan, StoryRecord } from '../core/model.js';
import { parsePlan, planOptionsFor } from '../core/plan/index.js';
import { inlineText } from '../core/report/escape.js';
import {
  applyPlanFixes,
  pendingFixes,
  renderRetro,
  retriedRecord,
  RETRO_APPLY_WITH_RESUME,
  RETRO_DOC,
  retroDocSchema,
  retroRunning,
  RETRO_RUN_STORY,
  RETRO_TEXTS,
  retroSubjects,
  tickedFixes,
  type FixOutcome,
  type RetroDoc,
} from '../core/retro/index.js';
import type { EventIssue, HandleResult } from './types.js';

/** The retro record and its compare-and-swap token; absent: none yet. */
export async function readRetroDoc(
  store: GitHubStateStore,
): Promise<{ doc: RetroDoc | undefined; sha: string | null }> {
  const read = await store.readJson<unknown>(RETRO_DOC);
  if (read === null) return { doc: undefined, sha: null };
  const parsed = retroDocSchema.safeParse(read.value);
  if (!parsed.success) {
    throw new EpicflowError(
      'state',
      `GitHub state: ${store.docPath(RETRO_DOC)} on the state branch is not a retro record`,
      { details: ['fix or delete the file, then comment /retro'] },
    );
  }
  return { doc: parsed.data, sha: read.sha };
}

interface RetroRequest {
  readonly repo: GitHubRepo;
  readonly store: GitHubStateStore;
  readonly epic: number;
  readonly config: EpicflowConfig;
  readonly plan: Plan;
  readonly records: Readonly<Record<string, StoryRecord>>;
  readonly by: string;
  readonly replyTo: number;
  readonly defaultBranch: string;
  readonly storyWorkflow: string;
  readonly now: string;
}

/** `/retro`: a reply when there is nothing to do, else the record, then the dispatch. */
export async function requestRetro(r: RetroRequest): Promise<HandleResult | 'conflict'> {
  const done = (outcome: HandleResult['outcome'], dispatched: string[] = []): HandleResult => ({
    outcome,
    epic: r.epic,
    dispatched,
  });
  const subjects = retroSubjects(r.plan, new Map(Object.entries(r.records)));
  if (subjects.length === 0) {
    await r.repo.reply(r.replyTo, RETRO_TEXTS.nothing);
    return done('replied');
  }
  if (!r.config.executors.some((e) => e.roles.includes('judge'))) {
    await r.repo.reply(r.replyTo, RETRO_TEXTS.noJudge);
    return done('replied');
  }
  const { doc, sha } = await readRetroDoc(r.store);
  if (doc !== undefined && retroRunning(doc, r.now)) {
    await r.repo.reply(r.replyTo, RETRO_TEXTS.running(doc.attempt));
    return done('replied');
  }
  if (doc?.proposal !== undefined) {
    const comment = await r.repo.findComment(r.epic, RETRO_MARKER);
    const waiting = pendingFixes(doc.proposal, tickedFixes(comment?.body ?? '', doc.proposal));
    if (waiting.length > 0) {
      await r.repo.reply(r.replyTo, RETRO_TEXTS.pending(waiting.map((f) => f.story)));
      return done('replied');
    }
  }
  const next: RetroDoc = {
    attempt: (doc?.attempt ?? 0) + 1,
    status: 'active',
    requestedBy: r.by,
    requestedAt: r.now,
  };
  const written = await r.store.writeJson(RETRO_DOC, next, sha);
  if (!written.ok) return 'conflict';
  await r.repo.dispatchWorkflow({
    workflow: r.storyWorkflow,
    ref: r.defaultBranch,
    inputs: { epic: String(r.epic), story: RETRO_RUN_STORY, attempt: String(next.attempt) },
  });
  await r.repo.reply(r.replyTo, RETRO_TEXTS.started(next.attempt, subjects.length));
  return done('reconciled', [`${RETRO_RUN_STORY}#${next.attempt}`]);
}

/**
 * Before a `/resume` is decided: applies the fixes ticked in the retro comment and not
 * applied yet. True when something was applied (the caller decides again, reading the
 * edited plan); false when there was nothing to apply.
 */
export async function applyRetroOnResume(input: {
  readonly repo: GitHubRepo;
  readonly store: GitHubStateStore;
  readonly epic: EventIssue;
  readonly config: EpicflowConfig;
  readonly now: string;
}): Promise<boolean> {
  const { repo, store, epic } = input;
  // The comment first: found in the epic view's comments, so an epic without a retro
  // costs its `/resume` no read.
  const comment = await repo.findComment(epic.number, RETRO_MARKER);
  if (comment === null) return false;
  const { doc, sha } = await readRetroDoc(store);
  const proposal = doc?.status === 'proposed' ? doc.proposal : undefined;
  if (doc === undefined || proposal === undefined) return false;
  const ticked = tickedFixes(comment.body, proposal);
  const pending = pendingFixes(proposal, ticked);
  if (pending.length === 0) return false;

  const options = planOptionsFor(input.config);
  const body = (await repo.getIssue(epic.number)).body;
  const parsed = parsePlan(body, options);
  if (!parsed.ok) return false;
  const records = new Map<string, StoryRecord>();
  for (const fix of pending) {
    const read = await store.read(fix.story);
    if (read !== null) records.set(fix.story, read.record);
  }
  const fixInput = {
    markdown: body,
    plan: parsed.plan,
    proposal,
    fixes: pending,
    records,
    options,
    now: input.now,
  };
  const planned = applyPlanFixes(fixInput);
  const outcomes: Record<string, FixOutcome> = { ...proposal.outcomes };
  for (const [story, outcome] of planned.outcomes) outcomes[story] = outcome;
  /** Story → its approved note. */
  const retries = new Map<string, string>();
  for (const fix of pending) {
    if (fix.kind !== 'retry') continue;
    const retried = retriedRecord(records.get(fix.story), fix.note);
    if (retried.ok) retries.set(fix.story, fix.note);
    outcomes[fix.story] = retried.ok
      ? { applied: true, at: input.now }
      : { applied: false, at: input.now, reason: retried.reason };
  }
  // The outcomes first: a second `/resume` (or App) that reads them applies nothing again.
  const updated: RetroDoc = { ...doc, proposal: { ...proposal, outcomes } };
  const claimed = await store.writeJson(RETRO_DOC, updated, sha);
  if (!claimed.ok) return true;
  if (planned.markdown !== body) {
    // Edited meanwhile: the fixes go onto the body as it is now (each checked again).
    const onto = (current: string): string => {
      if (current === body) return planned.markdown;
      const now = parsePlan(current, options);
      if (!now.ok) return current;
      return applyPlanFixes({ ...fixInput, markdown: current, plan: now.plan }).markdown;
    };
    await repo.ensureIssueBody(epic.number, onto);
  }
  for (const [story, fix] of retries) {
    await store.update(story, (current) => {
      const again = retriedRecord(current ?? undefined, fix);
      return again.ok ? again.record : (current ?? records.get(story) ?? fail(story));
    });
  }
  await repo.ensureComment({
    issueNumber: epic.number,
    marker: RETRO_MARKER,
    body: renderRetro(updated.proposal ?? proposal, { ticked, applyWith: RETRO_APPLY_WITH_RESUME }),
  });
  return true;
}

function fail(story: string): never {
  throw new EpicflowError('state', `GitHub state: the record of story ${story} is gone`);
}

/**
 * Ends an active retro attempt as failed with `reason` and says so on the epic (that
 * attempt, still active, only: a newer attempt or a recorded proposal is left alone).
 * True when it did.
 */
export async function failRetroAttempt(
  repo: GitHubRepo,
  store: GitHubStateStore,
  epic: number,
  attempt: number,
  reason: string,
): Promise<boolean> {
  const owned = failIfOwned<RetroDoc>({ kind: 'retro', epic, attempt }, (current) => ({
    ...current,
    status: 'failed',
    reason,
  }));
  await store.updateJson<RetroDoc | null>(RETRO_DOC, owned.change);
  const failed = owned.failed() !== undefined;
  if (failed) await repo.reply(epic, RETRO_TEXTS.failed(attempt, inlineText(reason)));
  return failed;
}

/** A retro run completed: one that died before recording its outcome fails its attempt. */
export async function retroRunFinished(input: {
  readonly repo: GitHubRepo;
  readonly store: GitHubStateStore;
  readonly epic: number;
  readonly attempt: number;
  readonly conclusion: string;
}): Promise<HandleResult> {
  const failed = await failRetroAttempt(
    input.repo,
    input.store,
    input.epic,
    input.attempt,
    `the retro job ended (${input.conclusion}) without recording an outcome`,
  );
  return failed
    ? { outcome: 'reconciled', reason: 'retro failed', epic: input.epic, dispatched: [] }
    : {
        outcome: 'ignored',
        reason: 'retro run already recorded',
        epic: input.epic,
        dispatched: [],
      };
}
