/**
 * The story lifecycle (PRODUCT §5): branch, catch up, setup, coder rounds,
 * gates against the baseline with the oracle guard, perimeter, then integrate
 * into the epic branch, recording the outcome after every step. Nothing here
 * throws for a story's own failure: the outcome is a record.
 */
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import type { ExecutorConfig } from '../core/config/types.js';
import { describeError, EpicflowError, isEpicflowError } from '../core/errors.js';
import {
  oracleFindings,
  parsePassCount,
  triageGate,
  type GateRun,
  type GateVerdict,
} from '../core/gates/index.js';
import {
  buildJudgePrompt,
  buildVerifierPrompt,
  extractAnswer,
  judgeVerdictSchema,
  verifierAnswerSchema,
} from '../core/judge/index.js';
import { formatChain, storyBranchName, type Story, type StoryRecord } from '../core/model.js';
import {
  classifyChanges,
  describeGitConfigRestore,
  type PerimeterResult,
} from '../core/perimeter/index.js';
import { answerBlocked, buildCoderPrompt, type PromptFeedback } from '../core/prompt/index.js';
import {
  decideAfterCheck,
  decideAfterExclusion,
  decideAfterHandover,
  decideAfterJudge,
  decideAfterTurn,
  decideAfterVerifier,
  INTERRUPTED,
  RATE_LIMIT_BACKOFF_MS,
  setupFailedReason,
  shortDetail,
  startRounds,
  type BlockedClaim,
  type CheckFacts,
  type Decision,
  type JudgeFacts,
  type StoryAction,
  type StoryEffect,
  type StoryRounds,
  type TurnFacts,
  type VerifierFacts,
} from '../core/story/index.js';
import type { EpicContext } from './context.js';
import { integrate } from './integrate.js';
import type { WorktreePort } from './ports.js';
import { StoryStop } from './stop.js';
import { mergeUsage } from './usage.js';
import { priceUsage } from '../core/usage/index.js';

export { INTERRUPTED, MAX_HANDOVERS, RATE_LIMIT_BACKOFF_MS } from '../core/story/index.js';

/** A judge or verifier call moves to another executor at most this many times. */
const HELPER_ATTEMPTS = 3;

/** Sleeps, returning early (without throwing) when the run is interrupted. */
async function backoff(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch {
    // Interrupted: the caller checks the signal next.
  }
}

/** The record writer of one story: every change is saved at once, atomically. */
class Recorder {
  constructor(
    private readonly ctx: EpicContext,
    public record: StoryRecord,
  ) {}

  async save(
    patch: Partial<StoryRecord>,
    clear: readonly ('reason' | 'finishedAt')[] = [],
  ): Promise<void> {
    const next: Record<string, unknown> = { ...this.record, ...patch };
    for (const key of clear) delete next[key];
    this.record = next as unknown as StoryRecord;
    await this.ctx.ports.state.writeStory(this.record);
  }

  async time<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const start = this.ctx.ports.clock.now().getTime();
    try {
      return await work();
    } finally {
      const ms = this.ctx.ports.clock.now().getTime() - start;
      const timings = { ...this.record.timings, [phase]: (this.record.timings[phase] ?? 0) + ms };
      await this.save({ timings });
    }
  }
}

/**
 * A story whose plan entry changed since its branch was created starts over:
 * its worktree and branch go before the new record (with the new hash, and
 * without the `restart` marker) is written, so a crash in between still
 * restarts it on the next run. The marker says the same when the record
 * already carries the new hash (the orchestrator wrote it at dispatch).
 */
async function discardIfChanged(
  ctx: EpicContext,
  story: Story,
  prior: StoryRecord | null,
  branch: string,
  worktreePath: string,
): Promise<void> {
  const { git } = ctx.ports;
  if (prior === null) return;
  const changed = prior.planHash !== ctx.settings.plan.hashes[story.id];
  if (!changed && prior.restart !== 'fresh') return;
  if ((await git.revParse(`refs/heads/${branch}`)) === null) return;
  ctx.emit(
    'story',
    'plan entry changed since its branch was created: starting over from the epic head',
    story.id,
  );
  await git.removeWorktree(worktreePath);
  await git.deleteBranch(branch);
}

/** The story's branch (new from the epic head, or resumed) checked out in its own worktree. */
async function prepareBranch(
  ctx: EpicContext,
  story: Story,
  branch: string,
  worktreePath: string,
): Promise<WorktreePort> {
  const { git } = ctx.ports;
  if ((await git.revParse(`refs/heads/${branch}`)) === null) {
    await git.createBranch(branch, ctx.epicHead);
    ctx.emit('story', `branch ${branch} created from ${ctx.settings.epicBranch}`, story.id);
  } else {
    ctx.emit('story', `resuming ${branch}`, story.id);
  }
  ctx.checkpoint('after-branch', story.id);
  return git.addWorktree(worktreePath, branch);
}

/**
 * Runs code in the story's tree that epicflow does not trust (an agent's turn,
 * setup and gates running the code it wrote) with git's own configuration
 * guarded: whatever it changed there (a filter, a merge driver, a proxy, the
 * `.git` file) is put back byte for byte before epicflow runs git again, and noted.
 */
async function guardGitConfig<T>(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  during: string,
  work: () => Promise<T>,
): Promise<T> {
  const snapshot = await tree.snapshotGitConfig();
  try {
    return await work();
  } finally {
    const restored = await tree.restoreGitConfig(snapshot);
    if (restored.length > 0) {
      const note = describeGitConfigRestore(restored, during);
      await rec.save({ notes: [...rec.record.notes, note] });
      ctx.emit('story', note, story.id, { restored });
    }
  }
}

/**
 * After code epicflow does not trust ran in the tree (gates, a judge's or verifier's
 * tools): the story is checked and merged as the commit `sha`, so the tree is put back
 * there, and whatever the code committed or left changed is discarded and noted.
 */
async function holdAt(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  sha: string,
  during: string,
): Promise<void> {
  const head = await tree.head();
  const dirty = await tree.dirtyPaths();
  if (head === sha && dirty.length === 0) return;
  const what = [
    ...(head === sha ? [] : [`committed ${head.slice(0, 12)}`]),
    ...(dirty.length === 0
      ? []
      : [`left changes in ${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}`]),
  ].join(' and ');
  await tree.resetHard(sha);
  const note = `${during} ${what}: discarded (checked as ${sha.slice(0, 12)})`;
  await rec.save({ notes: [...rec.record.notes, note] });
  ctx.emit('story', note, story.id);
}

/** Turns of a story so far: coder, judge and verifier turns count alike. */
interface TurnCounter {
  round: number;
}

interface HelperAnswer<T> {
  readonly value: T;
  readonly executor: string;
  /** False when the helper is also one of the story's coders. */
  readonly independent: boolean;
}

/**
 * One judge or verifier call: picks an executor for the role away from the
 * story's coders when another can serve, records its usage under that executor,
 * puts back anything it changed, and reads its JSON answer (one repair re-ask
 * when the answer does not fit the schema). Infrastructure signals exclude the
 * executor and move the call to another one. Returns the answer, or why there is none.
 */
async function askHelper<T>(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  /** The story's coders, whom the helper avoids when another can serve. */
  coders: readonly string[],
  request: {
    readonly role: 'judge' | 'verifier';
    readonly preferred?: string | undefined;
    readonly prompt: (repairError: string | undefined) => string;
    readonly schema: z.ZodType<T>;
    /** The commit the helper looks at: the tree is held there (it only reads). */
    readonly head: string;
  },
): Promise<HelperAnswer<T> | string> {
  const { role } = request;
  let repairError: string | undefined;
  let why = `no executor can take the ${role} role`;
  for (let attempt = 0; attempt < HELPER_ATTEMPTS;) {
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
    const pick = ctx.roster.helper(role, request.preferred, coders);
    if (pick === null) return why;
    const executor = pick.executor;
    ctx.emit(
      'story',
      `round ${turn.round}: ${executor.id} ${role === 'judge' ? 'judging' : 'verifying'}`,
      story.id,
    );
    const doing = `round ${turn.round} (${executor.id} ${role === 'judge' ? 'judging' : 'verifying'})`;
    const result = await guardGitConfig(ctx, story, tree, rec, doing, () =>
      rec.time(role, () =>
        ctx.ports.executors(executor).runTurn(
          {
            epic: ctx.settings.epic,
            story: story.id,
            round: turn.round,
            role,
            prompt: request.prompt(repairError),
            worktree: tree.path,
            executor,
            env: ctx.settings.executorEnv[executor.id] ?? {},
            home: join(ctx.settings.homesDir, story.id, executor.id),
            timeoutMs: ctx.config.timeouts.storyMs,
          },
          ctx.interrupt.signal,
        ),
      ),
    );
    turn.round += 1;
    await rec.save({
      usage: mergeUsage(rec.record.usage, priceUsage(result.usage, ctx.config.prices)),
    });
    // A judge or verifier only reads: whatever it committed or changed is put back.
    await holdAt(ctx, story, tree, rec, request.head, `the ${role} (${executor.id})`);
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
    if (result.outcome === 'ok') {
      const answer = extractAnswer(result.finalMessage, request.schema);
      if (answer.ok)
        return { value: answer.value, executor: executor.id, independent: pick.independent };
      if (repairError !== undefined) return `${executor.id} gave no valid answer: ${answer.error}`;
      repairError = answer.error;
      ctx.emit(
        'story',
        `${role} answer of ${executor.id} unreadable (${answer.error}); asking once more`,
        story.id,
      );
      continue;
    }
    attempt += 1;
    if (result.missingBinary === true) {
      await ctx.roster.missingBinary(executor.id, result.detail);
      why = `${executor.id}: ${shortDetail(result.detail)}`;
      continue;
    }
    if (result.outcome === 'failed') return `${executor.id} failed: ${shortDetail(result.detail)}`;
    const exclusion = await ctx.roster.signal(
      executor.id,
      result.outcome,
      result.resetAt,
      result.detail,
    );
    why = `${executor.id} stopped: ${exclusion?.reason ?? result.outcome}`;
    if (exclusion === null) await backoff(RATE_LIMIT_BACKOFF_MS * attempt, ctx.interrupt.signal);
  }
  return why;
}

/** The judge's verdict on the branch as it is (an empty diff asks whether the work is in place). */
async function judgeStory(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  coders: readonly string[],
  base: string,
  empty: boolean,
): Promise<JudgeFacts> {
  const head = await tree.head();
  const diff = empty ? '' : await ctx.ports.git.diff(base, head);
  const answer = await askHelper(ctx, story, tree, rec, turn, coders, {
    role: 'judge',
    head,
    preferred: ctx.config.judge?.executor,
    schema: judgeVerdictSchema,
    prompt: (repairError) =>
      buildJudgePrompt({
        epic: ctx.settings.epic,
        plan: ctx.settings.plan,
        story,
        diff,
        houseRules: ctx.settings.houseRules,
        repairError,
      }),
  });
  if (typeof answer === 'string') return { kind: 'unavailable', why: answer };
  return {
    kind: 'verdict',
    verdict: answer.value,
    executor: answer.executor,
    independent: answer.independent,
  };
}

/** A verifier's answer on a BLOCKED_ON claim the plan cannot settle. */
async function verifyClaim(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  coders: readonly string[],
  claim: BlockedClaim,
): Promise<VerifierFacts> {
  const verdict = await askHelper(ctx, story, tree, rec, turn, coders, {
    role: 'verifier',
    head: await tree.head(),
    schema: verifierAnswerSchema,
    prompt: (repairError) =>
      buildVerifierPrompt({
        epic: ctx.settings.epic,
        plan: ctx.settings.plan,
        story,
        claim: claim.claim,
        planAnswer: claim.answer,
        repairError,
      }),
  });
  if (typeof verdict === 'string') return { kind: 'unavailable', why: verdict };
  return {
    kind: 'answer',
    executor: verdict.executor,
    real: verdict.value.real,
    reason: verdict.value.reason,
  };
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

/** Waits `ms` (returning early when interrupted), then runs one coder turn and commits it. */
async function coderTurn(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnCounter,
  executor: ExecutorConfig,
  action: { readonly feedback: PromptFeedback | undefined; readonly waitMs: number },
): Promise<TurnFacts> {
  if (action.waitMs > 0) await backoff(action.waitMs, ctx.interrupt.signal);
  if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
  const { feedback } = action;
  const prompt = buildCoderPrompt({
    epic: ctx.settings.epic,
    plan: ctx.settings.plan,
    story,
    round: turn.round,
    gates: ctx.config.gates,
    houseRules: ctx.settings.houseRules,
    ...(feedback === undefined ? {} : { feedback }),
  });
  ctx.emit('story', `round ${turn.round}: ${executor.id} coding`, story.id);
  const started = rec.record.startedAt
    ? Date.parse(rec.record.startedAt)
    : ctx.ports.clock.now().getTime();
  const left = ctx.config.timeouts.storyMs - (ctx.ports.clock.now().getTime() - started);
  const doing = `round ${turn.round} (${executor.id} coding)`;
  const result = await guardGitConfig(ctx, story, tree, rec, doing, () => {
    const pending = ctx.ports.executors(executor).runTurn(
      {
        epic: ctx.settings.epic,
        story: story.id,
        round: turn.round,
        role: 'coder',
        prompt,
        worktree: tree.path,
        executor,
        env: ctx.settings.executorEnv[executor.id] ?? {},
        home: join(ctx.settings.homesDir, story.id, executor.id),
        timeoutMs: Math.max(1000, left),
      },
      ctx.interrupt.signal,
    );
    ctx.checkpoint('mid-coder', story.id);
    return rec.time('code', () => pending);
  });
  // Every harness's usage is priced the same way: the CLI's own cost, else the price table.
  const priced = priceUsage(result.usage, ctx.config.prices);
  await rec.save({ usage: mergeUsage(rec.record.usage, priced) });
  const sha = await tree.commitAll(`${story.id}: round ${turn.round} by ${executor.id}`);
  if (sha !== null) ctx.checkpoint('after-commit', story.id);
  turn.round += 1;
  return {
    interrupted: ctx.interrupt.signal.aborted,
    outcome: result.outcome,
    missingBinary: result.missingBinary === true,
    detail: result.detail,
    resetAt: result.resetAt,
    blocked:
      result.blockedOn === undefined ? undefined : blockedClaim(ctx, story, result.blockedOn),
  };
}

/** The checks of one commit: the story is merged as this commit or not at all. */
interface CheckResult extends Omit<CheckFacts, 'interrupted'> {
  readonly verdicts: GateVerdict[];
  readonly oracle: string[];
  readonly perimeter: PerimeterResult;
  readonly runs: GateRun[];
}

/** Gates against the baseline, the oracle guard and the perimeter of the branch as it is. */
async function checkStory(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  base: string,
  baseline: readonly GateRun[],
): Promise<CheckResult> {
  // What is judged is a commit, not the tree: the tree is held at it after the gates.
  const commit = await tree.head();
  const changes = await tree.changedPaths(base, commit);
  const perimeter = classifyChanges({
    changes,
    owns: story.owns,
    reads: story.reads,
    configPaths: ctx.settings.configPaths,
    allowWorkflowChanges: ctx.config.allowWorkflowChanges,
  });
  if (changes.length === 0) {
    return { verdicts: [], oracle: [], perimeter, runs: [], empty: true, commit };
  }
  // The gates run the code the agent wrote.
  const pending = guardGitConfig(ctx, story, tree, rec, 'the gates', () =>
    rec.time('gates', () => ctx.runGates(tree.path)),
  );
  ctx.checkpoint('mid-gates', story.id);
  const runs = await pending;
  // A gate that commits, or rewrites files, changes nothing that is merged.
  await holdAt(ctx, story, tree, rec, commit, 'the gates');
  const verdicts = runs.map((r, i) => triageGate(r, baseline[i]));
  const counts = (
    list: readonly (number | null)[],
    other: readonly (number | null)[],
  ): number | null => {
    // Only gates that report a count on both sides are compared.
    let sum: number | null = null;
    list.forEach((n, i) => {
      if (n !== null && other[i] !== null && other[i] !== undefined) sum = (sum ?? 0) + n;
    });
    return sum;
  };
  const current = verdicts.map((v) => v.passCount);
  // Read from the whole output when the gate runner gathered it (older stored baselines: the text).
  const before = baseline.map((b) =>
    b.passCount !== undefined ? b.passCount : parsePassCount(b.output),
  );
  const diff = changes.some((c) => c.status !== 'deleted')
    ? await ctx.ports.git.diff(base, commit)
    : '';
  const oracle = oracleFindings({
    changes,
    diff,
    baselinePassed: counts(before, current),
    currentPassed: counts(current, before),
    testsChange: story.testsChange,
  });
  return { verdicts, oracle, perimeter, runs, empty: false, commit };
}

/** Tells and records what a decision says, in its order. */
async function perform(
  ctx: EpicContext,
  story: Story,
  rec: Recorder,
  effects: readonly StoryEffect[],
): Promise<void> {
  for (const effect of effects) {
    switch (effect.kind) {
      case 'say':
        ctx.emit('story', effect.message, story.id);
        break;
      case 'note':
        await rec.save({ notes: [...rec.record.notes, ...effect.notes] });
        break;
      case 'executors':
        await rec.save({ executors: [...effect.executors] });
        break;
      case 'halt':
        ctx.setHalt(effect.halt);
        break;
    }
  }
}

/** Puts paths outside the perimeter back as on the epic base, as a commit of the story. */
async function restoreStrays(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  base: string,
  paths: readonly string[],
): Promise<void> {
  await rec.time('perimeter', async () => {
    await tree.restorePaths(base, paths);
    await tree.commitAll(`${story.id}: put paths outside the perimeter back`);
  });
  ctx.checkpoint('after-restore', story.id);
  await rec.save({
    notes: [...rec.record.notes, `restored outside its perimeter: ${paths.join(', ')}`],
  });
  ctx.emit(
    'story',
    `restored ${paths.length} path(s) outside its perimeter from ${ctx.settings.epicBranch}: ${paths.join(', ')}`,
    story.id,
  );
}

export interface StoryRunInput {
  readonly story: Story;
  readonly executor: ExecutorConfig;
  readonly prior: StoryRecord | null;
}

/** Runs one story to its outcome; always returns the saved record. */
export async function runStory(ctx: EpicContext, input: StoryRunInput): Promise<StoryRecord> {
  const { story, prior } = input;
  const { epic } = ctx.settings;
  const branch = storyBranchName(epic, story.id);
  const hash = ctx.settings.plan.hashes[story.id] ?? '';
  const now = (): string => ctx.ports.clock.now().toISOString();
  // A record marked `restart` already carries the new hash and attempt: only the work is new.
  const marked = prior?.restart === 'fresh';
  const sameEntry = prior !== null && prior.planHash === hash && !marked;
  const chain = sameEntry ? [...prior.executors] : [];
  if (chain[chain.length - 1] !== input.executor.id) chain.push(input.executor.id);
  const rec = new Recorder(ctx, {
    version: 1,
    epic,
    story: story.id,
    planHash: hash,
    status: 'active',
    branch,
    // A crash mid-story resumes the same attempt; a retry or a restart is a new one.
    attempt:
      prior === null
        ? 1
        : marked || prior.startedAt === undefined || (prior.status === 'active' && sameEntry)
          ? prior.attempt
          : prior.attempt + 1,
    executors: chain,
    usage: prior?.usage ?? [],
    notes: sameEntry ? prior.notes : [],
    startedAt: now(),
    timings: sameEntry ? prior.timings : {},
  });
  const worktreePath = join(ctx.settings.worktreesDir, story.id);
  try {
    await discardIfChanged(ctx, story, prior, branch, worktreePath);
    await rec.save({});
    ctx.emit('status', `started with ${input.executor.id}`, story.id, {
      status: 'active',
      executor: input.executor.id,
    });
    const tree = await prepareBranch(ctx, story, branch, worktreePath);
    const base = ctx.epicHead;
    const caught = await tree.catchUp(base);
    if (caught.merged) ctx.emit('story', `caught up with ${ctx.settings.epicBranch}`, story.id);
    // A resumed branch holds the agent's earlier work, which setup may run (package scripts).
    const setupFailure = await guardGitConfig(ctx, story, tree, rec, 'setup', () =>
      rec.time('setup', () => ctx.runSetup(tree.path)),
    );
    if (setupFailure !== null)
      throw new StoryStop('failed', setupFailedReason(setupFailure.output));
    ctx.checkpoint('after-setup', story.id);
    // Baseline gates run the epic's code: earlier stories' agents wrote it.
    const baseline = await ctx.merge.run(() =>
      guardGitConfig(ctx, story, ctx.epicTree, rec, 'the baseline gates', () => ctx.baseline(base)),
    );

    const turn: TurnCounter = { round: 1 };
    const checks = async (): Promise<CheckFacts> => {
      const check = await checkStory(ctx, story, tree, rec, base, baseline);
      // Gates killed by an interrupt prove nothing either way.
      return { ...check, interrupted: ctx.interrupt.signal.aborted };
    };
    /** Performs one step that does not end the story and decides on its result. */
    const step = async (
      state: StoryRounds,
      action: Exclude<StoryAction, { kind: 'integrate' | 'in-place' | 'stop' }>,
    ): Promise<Decision> => {
      switch (action.kind) {
        case 'code':
          return decideAfterTurn(
            state,
            await coderTurn(ctx, story, tree, rec, turn, state.executor, action),
          );
        case 'exclude': {
          const { signal } = action;
          const exclusion =
            signal.kind === 'missing-binary'
              ? await ctx.roster.missingBinary(action.executor, signal.detail)
              : await ctx.roster.signal(
                  action.executor,
                  signal.outcome,
                  signal.resetAt,
                  signal.detail,
                );
          return decideAfterExclusion(state, {
            exclusion: exclusion?.reason ?? null,
            exhausted: ctx.roster.exhausted(),
          });
        }
        case 'hand-over':
          return decideAfterHandover(state, {
            next: await ctx.roster.handover(story.id, state.chain),
          });
        case 'verify':
          return decideAfterVerifier(
            state,
            await verifyClaim(ctx, story, tree, rec, turn, state.chain, action.claim),
          );
        case 'check':
          return decideAfterCheck(state, await checks());
        case 'restore':
          await restoreStrays(ctx, story, tree, rec, base, action.paths);
          // The gates must hold without the restored paths, the perimeter is judged again.
          return decideAfterCheck(state, await checks());
        case 'judge':
          return decideAfterJudge(
            state,
            await judgeStory(ctx, story, tree, rec, turn, state.chain, base, action.inPlace),
          );
      }
    };

    let decision = startRounds(
      {
        fixRounds: ctx.config.fixRounds,
        judgeRounds: ctx.config.judge?.rounds,
        verifier: ctx.config.executors.some((e) => e.roles.includes('verifier')),
      },
      input.executor,
      chain,
    );
    for (;;) {
      await perform(ctx, story, rec, decision.effects);
      const { state, next } = decision;
      if (next.kind === 'stop') throw new StoryStop(next.status, next.reason);
      if (next.kind === 'in-place') {
        await rec.save(
          {
            status: 'done',
            executors: [...state.chain],
            notes: [...rec.record.notes, 'already in place'],
            finishedAt: now(),
          },
          ['reason'],
        );
        ctx.emit('status', 'done: already in place; nothing to merge', story.id, {
          status: 'done',
        });
        return rec.record;
      }
      if (next.kind === 'integrate') {
        await rec.save({ executors: [...state.chain] });
        // The epic's gates run the merged code; the epic tree shares the repository's configuration.
        const merged = await rec.time('integrate', () =>
          guardGitConfig(
            ctx,
            story,
            ctx.epicTree,
            rec,
            `the merge into ${ctx.settings.epicBranch}`,
            () => integrate(ctx, { story, branch, commit: next.commit, chain: state.chain }),
          ),
        );
        await rec.save(
          { status: 'done', mergeCommit: merged, storyCommit: next.commit, finishedAt: now() },
          ['reason'],
        );
        ctx.emit(
          'status',
          `merged into ${ctx.settings.epicBranch} (${formatChain(state.chain)})`,
          story.id,
          {
            status: 'done',
            mergeCommit: merged,
          },
        );
        return rec.record;
      }
      decision = await step(state, next);
    }
  } catch (e) {
    const stop =
      e instanceof StoryStop
        ? e
        : isEpicflowError(e, 'halt')
          ? new StoryStop('failed', `not merged: ${e.message}`)
          : new StoryStop('failed', describeError(e).split('\n').join(' | '));
    const status = stop.status;
    await rec.save({ status, reason: stop.reason, finishedAt: now() });
    ctx.emit('status', `${status}: ${stop.reason}`, story.id, { status, reason: stop.reason });
    if (!(e instanceof StoryStop) && !(e instanceof EpicflowError)) {
      // A bug of ours, not the story's: keep it visible in events.jsonl.
      ctx.emit('story', `internal error: ${String((e as Error).stack ?? e)}`, story.id);
    }
    return rec.record;
  }
}
