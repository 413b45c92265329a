/**
 * The coder turns of a story: a turn committed, its usage priced, its claims checked,
 * with the tree held at the commit it left. The judge and verifier calls are in
 * helper-calls.ts. What follows a turn is decided by core/story.
 */
import { pruneReadFirst } from '../../core/plan/read-first.js';
import type { ExecutorConfig } from '../../core/config/types.js';
import type { RunRecord } from '../../core/executor.js';
import { totalTokens, type Story } from '../../core/model.js';
import {
  answerBlocked,
  buildCoderPrompt,
  describeStartingCode,
  startingCodeSection,
  type PromptFeedback,
  type StartingCode,
} from '../../core/prompt/index.js';
import {
  checkClaims,
  decideIssueRequests,
  INTERRUPTED,
  mergeIssueRequests,
  noIssueRequests,
  parseIssueRequests,
  parseClaims,
  parseFindings,
  type BlockedClaim,
  type ExecutorSignal,
  type TurnFacts,
} from '../../core/story/index.js';
import { priceUsage } from '../../core/usage/index.js';
import type { Exclusion } from '../../core/roster/index.js';
import type { EpicContext } from '../context.js';
import type { WorktreePort } from '../ports.js';
import { StoryStop } from '../stop.js';
import type { TraceAttributes } from '../trace.js';
import { startTurn, storyTimeLeft, turnEnd } from '../turn-request.js';
import { mergeUsage } from '../usage.js';
import { guardGitConfig, noteNestedLeftOut } from './checks.js';
import type { Recorder } from './recorder.js';
import { readStartingCode } from './starting-code.js';

/** What a turn's span says of how it ended and what it used. */
export function turnAttributes(r: RunRecord): TraceAttributes {
  const tokens = r.usage.reduce((sum, u) => sum + totalTokens(u.tokens), 0);
  const cost = r.usage.reduce((sum, u) => sum + (u.costUsd ?? 0), 0);
  return {
    'epicflow.outcome': r.outcome,
    'epicflow.tokens': tokens,
    ...(r.usage.some((u) => u.costUsd !== null) ? { 'epicflow.cost_usd': cost } : {}),
    ...(r.stalled === undefined ? {} : { 'epicflow.stalled': r.stalled.signal }),
  };
}

/** Waits before a retry, returning early (without throwing) when the run is interrupted. */
export function backoff(ctx: EpicContext, ms: number): Promise<void> {
  return ctx.ports.clock.sleep(ms, ctx.interrupt.signal);
}

/** Turns of a story so far: coder, judge and verifier turns count alike. */
export interface TurnCounter {
  round: number;
  /** The code the story started from in this run, read before its first coder turn. */
  starting?: StartingCode;
  /** The story's `readFirst` anchors as pruned against the tree it started from in this run. */
  readFirst?: readonly string[];
  /** A judge (verifier) call came in this run: later ones never reuse a kept answer. */
  judged?: boolean;
  verified?: boolean;
}

/** Where a story's turns run and are recorded. */
export interface TurnScope {
  readonly ctx: EpicContext;
  readonly story: Story;
  /** The story's tree (checked out anew when another coder takes over). */
  tree: WorktreePort;
  readonly rec: Recorder;
  readonly turn: TurnCounter;
  /** The task these rounds run (a task plan): its prompt section, and its findings once it answered. */
  readonly task?: TaskTurn;
}

/** The task of a coder turn: shown in its prompt; the "Findings" it ended with are kept. */
export interface TaskTurn {
  readonly section: readonly string[];
  findings?: string;
}

/** A BLOCKED_ON claim with what the plan answers it. */
function blockedClaim(ctx: EpicContext, story: Story, claim: string): BlockedClaim {
  const answer = answerBlocked(ctx.settings.plan, story, claim);
  return {
    claim,
    answer: answer.answer,
    suggestedEdit: answer.suggestedEdit,
    decided: answer.decided,
  };
}

/**
 * "The code you start from", read at the branch head before the run's first coder turn,
 * and shown to every coder turn while the branch is still there (a turn retried after a
 * rate limit, a takeover before anything was committed); once a turn committed, the
 * files it shows are no longer the tree's, and it is left out.
 */
async function startingCodeNow(scope: TurnScope): Promise<StartingCode | undefined> {
  const { ctx, story, tree, turn } = scope;
  const head = await tree.head();
  if (turn.starting === undefined) {
    turn.starting = await readStartingCode(ctx, story, head);
    if (startingCodeSection(turn.starting).length > 0) {
      ctx.emit('story', describeStartingCode(turn.starting), story.id);
    }
  }
  return turn.starting.commit === head ? turn.starting : undefined;
}

/**
 * The story's `readFirst` anchors that are safe to show, pruned once per run against the
 * tree it starts from; each dropped anchor is said once, with why.
 */
async function readFirstNow(scope: TurnScope): Promise<readonly string[] | undefined> {
  const { ctx, story, tree, turn } = scope;
  if (story.readFirst === undefined) return undefined;
  if (turn.readFirst === undefined) {
    const pruned = pruneReadFirst(
      story.readFirst,
      await ctx.ports.git.treeFiles(await tree.head()),
    );
    for (const d of pruned.dropped) {
      ctx.emit('story', `note: readFirst \`${d.anchor}\` dropped: ${d.why}`, story.id);
    }
    turn.readFirst = pruned.kept;
  }
  return turn.readFirst;
}

/** Waits `ms` (returning early when interrupted), then runs one coder turn and commits it. */
export async function coderTurn(
  scope: TurnScope,
  executor: ExecutorConfig,
  action: { readonly feedback: PromptFeedback | undefined; readonly waitMs: number },
): Promise<TurnFacts> {
  const { ctx, story, tree, rec, turn } = scope;
  if (action.waitMs > 0) await backoff(ctx, action.waitMs);
  if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
  const { feedback } = action;
  const startingCode = await startingCodeNow(scope);
  const readFirst = await readFirstNow(scope);
  const prompt = buildCoderPrompt({
    epic: ctx.settings.epic,
    plan: ctx.settings.plan,
    story: readFirst === undefined ? story : { ...story, readFirst },
    round: turn.round,
    gates: ctx.storyScope(story).gates.map((g) => g.label),
    houseRules: ctx.settings.houseRules,
    issueTools: ctx.config.issueTools,
    ...(feedback === undefined ? {} : { feedback }),
    ...(rec.record.revision === undefined ? {} : { review: rec.record.revision }),
    ...(rec.record.retroNote === undefined ? {} : { retroNote: rec.record.retroNote }),
    ...(startingCode === undefined ? {} : { startingCode }),
    ...(scope.task === undefined ? {} : { tasks: scope.task.section }),
    ...(rec.record.deferredRound === undefined
      ? {}
      : { followUp: rec.record.deferredRound.findings }),
  });
  ctx.emit('story', `round ${turn.round}: ${executor.id} coding`, story.id);
  const timeoutMs = storyTimeLeft(ctx, rec.record.startedAt);
  const round = turn.round;
  const doing = `round ${round} (${executor.id} coding)`;
  const result = await guardGitConfig(ctx, story, tree, rec, doing, () => {
    const log = rec.logs.open('coder');
    const pending = startTurn(
      ctx,
      executor,
      { story: story.id, round, role: 'coder', prompt, worktree: tree.path, timeoutMs },
      log,
    );
    ctx.checkpoint('mid-coder', story.id);
    return rec.time(
      'code',
      async () => {
        try {
          return await pending;
        } finally {
          await rec.logs.save('coder', log);
        }
      },
      { 'epicflow.round': round, 'epicflow.executor': executor.id },
      turnAttributes,
    );
  });
  // Every harness's usage is priced the same way: the CLI's own cost, else the price table.
  const priced = priceUsage(result.usage, ctx.config.prices);
  await rec.save({ usage: mergeUsage(rec.record.usage, priced) });
  // What it says it verified, against the commands its own event stream shows it ran.
  const evidence =
    result.outcome === 'ok'
      ? checkClaims(parseClaims(result.finalMessage), result.commandsRun, {
          round,
          executor: executor.id,
        })
      : [];
  if (evidence.length > 0) {
    await rec.save({ notes: [...rec.record.notes, ...evidence] });
    for (const note of evidence) ctx.emit('story', `warning: ${note}`, story.id);
  }
  // Labels and assignees it asked for on its sub-issue: kept only as `issueTools` allows.
  const asked = result.outcome === 'ok' ? parseIssueRequests(result.finalMessage) : undefined;
  if (asked !== undefined) {
    const { allowed, dropped } = decideIssueRequests(asked, ctx.config.issueTools);
    const kept = mergeIssueRequests(rec.record.issueRequests, allowed);
    await rec.save({
      ...(noIssueRequests(kept) ? {} : { issueRequests: kept }),
      notes: [...rec.record.notes, ...dropped],
    });
    for (const note of dropped) ctx.emit('story', `warning: ${note}`, story.id);
  }
  if (scope.task !== undefined && result.outcome === 'ok') {
    const findings = parseFindings(result.finalMessage);
    if (findings !== undefined) scope.task.findings = findings;
  }
  const sha = await tree.commitAll(
    `${story.id}: round ${turn.round} by ${executor.id}`,
    noteNestedLeftOut(ctx, story, rec),
  );
  if (sha !== null) {
    // The paid work is on the branch: a resume checks it before paying for another turn.
    await rec.save({ progress: { commit: sha, passed: 'none' } });
    ctx.checkpoint('after-commit', story.id);
  }
  turn.round += 1;
  return {
    interrupted: ctx.interrupt.signal.aborted,
    round,
    ...turnEnd(result),
    unchanged: sha === null,
    blocked:
      result.blockedOn === undefined ? undefined : blockedClaim(ctx, story, result.blockedOn),
  };
}

/** Tells the roster an executor stopped; its exclusion, or none (a rate limit below the threshold). */
export async function signalRoster(
  ctx: EpicContext,
  executor: string,
  signal: ExecutorSignal,
): Promise<Exclusion | null> {
  return signal.kind === 'missing-binary'
    ? ctx.roster.missingBinary(executor, signal.detail)
    : ctx.roster.signal(executor, signal.outcome, signal.resetAt, signal.detail);
}
