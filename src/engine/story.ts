/**
 * The story lifecycle (docs/architecture.md): branch, catch up, setup, coder rounds,
 * gates against the baseline with the oracle guard, perimeter, then integrate
 * into the epic branch, recording the outcome after every step. Nothing here
 * throws for a story's own failure: the outcome is a record.
 */
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import type { ExecutorConfig } from '../core/config/types.js';
import { describeError, EpicflowError, isEpicflowError } from '../core/errors.js';
import type { RunRecord } from '../core/executor.js';
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
  formatScores,
  judgeVerdictSchema,
  verdictFindings,
  verifierAnswerSchema,
  type JudgeVerdict,
} from '../core/judge/index.js';
import { formatChain, storyBranchName, type Story, type StoryRecord } from '../core/model.js';
import {
  classifyChanges,
  describeGitConfigRestore,
  describeStrays,
  isClean,
  strayPaths,
  type PerimeterResult,
} from '../core/perimeter/index.js';
import { answerBlocked, buildCoderPrompt, type PromptFeedback } from '../core/prompt/index.js';
import type { Exclusion } from '../core/roster/index.js';
import type { EpicContext } from './context.js';
import { integrate } from './integrate.js';
import type { WorktreePort } from './ports.js';
import { StoryStop } from './stop.js';
import { mergeUsage } from './usage.js';
import { priceUsage } from '../core/usage/index.js';

/** The reason of a story stopped by SIGINT/SIGTERM; a rerun continues it. */
export const INTERRUPTED = 'interrupted; rerun to continue';

/** At most this many handovers per story (docs/executors.md). */
export const MAX_HANDOVERS = 2;

/** Waits before retrying a rate-limited turn: 1 s, then 2 s (the third one excludes). */
export const RATE_LIMIT_BACKOFF_MS = 1000;

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

/** A process detail in one line: its first line and the last lines of output. */
function shortDetail(detail: string): string {
  const lines = detail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length === 0) return 'no detail';
  const rest = lines.slice(1).slice(-3);
  return [lines[0], ...rest].join(' | ');
}

function tailLines(lines: readonly string[], n: number): string {
  return lines.slice(0, n).join('; ');
}

function describeVerdicts(verdicts: readonly GateVerdict[], lines = 3): string {
  return verdicts
    .filter((v) => v.status === 'new')
    .map((v) => `${v.command}: ${tailLines(v.newLines, lines) || 'failed'}`)
    .join(' | ');
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

interface TurnState {
  executor: ExecutorConfig;
  chain: string[];
  handovers: number;
  round: number;
  rateRetries: number;
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
  turn: TurnState,
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
    const pick = ctx.roster.helper(role, request.preferred, turn.chain);
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

interface JudgeResult {
  readonly verdict: JudgeVerdict;
  readonly executor: string;
  readonly independent: boolean;
}

/** The judge's verdict on the branch as it is (an empty diff asks whether the work is in place). */
async function judgeStory(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnState,
  base: string,
  empty: boolean,
): Promise<JudgeResult> {
  const head = await tree.head();
  const diff = empty ? '' : await ctx.ports.git.diff(base, head);
  const answer = await askHelper(ctx, story, tree, rec, turn, {
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
  if (typeof answer === 'string') throw new StoryStop('failed', `judge unavailable: ${answer}`);
  const findings = verdictFindings(answer.value);
  ctx.emit(
    'story',
    `judge ${answer.executor}: ${answer.value.cleared ? 'cleared' : 'not cleared'} (${formatScores(answer.value)})` +
      (findings.length > 0 && !answer.value.cleared ? `: ${findings.join('; ')}` : ''),
    story.id,
  );
  return { verdict: answer.value, executor: answer.executor, independent: answer.independent };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Runs one coder turn and handles infrastructure outcomes: a usage limit, auth
 * failure or outage hands the story to the next executor (at most twice); a
 * rate limit below the exclusion threshold retries. Returns the ok record.
 */
async function coderTurn(
  ctx: EpicContext,
  story: Story,
  tree: WorktreePort,
  rec: Recorder,
  turn: TurnState,
  feedback: PromptFeedback | undefined,
): Promise<{ record: RunRecord; feedback: PromptFeedback | undefined }> {
  let fb = feedback;
  for (;;) {
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
    const prompt = buildCoderPrompt({
      epic: ctx.settings.epic,
      plan: ctx.settings.plan,
      story,
      round: turn.round,
      gates: ctx.config.gates,
      houseRules: ctx.settings.houseRules,
      ...(fb === undefined ? {} : { feedback: fb }),
    });
    ctx.emit('story', `round ${turn.round}: ${turn.executor.id} coding`, story.id);
    const started = rec.record.startedAt
      ? Date.parse(rec.record.startedAt)
      : ctx.ports.clock.now().getTime();
    const left = ctx.config.timeouts.storyMs - (ctx.ports.clock.now().getTime() - started);
    const doing = `round ${turn.round} (${turn.executor.id} coding)`;
    const result = await guardGitConfig(ctx, story, tree, rec, doing, () => {
      const pending = ctx.ports.executors(turn.executor).runTurn(
        {
          epic: ctx.settings.epic,
          story: story.id,
          round: turn.round,
          role: 'coder',
          prompt,
          worktree: tree.path,
          executor: turn.executor,
          env: ctx.settings.executorEnv[turn.executor.id] ?? {},
          home: join(ctx.settings.homesDir, story.id, turn.executor.id),
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
    const sha = await tree.commitAll(`${story.id}: round ${turn.round} by ${turn.executor.id}`);
    if (sha !== null) ctx.checkpoint('after-commit', story.id);
    turn.round += 1;
    if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);

    if (result.outcome === 'ok') return { record: result, feedback: fb };
    let exclusion: Exclusion | null;
    if (result.missingBinary === true) {
      // Not the story's fault: the executor is out for the run and the story moves on.
      exclusion = await ctx.roster.missingBinary(turn.executor.id, result.detail);
    } else if (result.outcome === 'failed') {
      throw new StoryStop(
        'failed',
        `coder turn failed (${turn.executor.id}): ${shortDetail(result.detail)}`,
      );
    } else {
      exclusion = await ctx.roster.signal(
        turn.executor.id,
        result.outcome,
        result.resetAt,
        result.detail,
      );
    }
    if (exclusion === null) {
      // A rate limit below the threshold: the same executor tries again after a short
      // backoff; the roster's threshold (3 in 10 minutes) bounds the retries.
      turn.rateRetries += 1;
      ctx.emit('story', `${turn.executor.id} was rate limited; trying again`, story.id);
      await backoff(RATE_LIMIT_BACKOFF_MS * turn.rateRetries, ctx.interrupt.signal);
      continue;
    }
    turn.rateRetries = 0;
    const why = exclusion.reason;
    ctx.emit('story', `${turn.executor.id} stopped: ${why}`, story.id);
    const exhausted = ctx.roster.exhausted();
    if (exhausted !== null) {
      ctx.setHalt({
        kind: 'roster-exhausted',
        message: exhausted.message,
        ...(exhausted.until === undefined ? {} : { until: exhausted.until }),
      });
    }
    if (turn.handovers >= MAX_HANDOVERS) {
      throw new StoryStop(
        'failed',
        `${turn.executor.id} stopped (${why}) after ${MAX_HANDOVERS} handovers`,
      );
    }
    const next = await ctx.roster.handover(story.id, turn.chain);
    if (next === null) {
      // Infrastructure, not the story's work: with the roster exhausted it waits for an executor.
      throw new StoryStop(
        exhausted === null ? 'failed' : 'waiting',
        `${turn.executor.id} stopped (${why}) and no other executor can take over`,
      );
    }
    ctx.emit('story', `handed over from ${turn.executor.id} to ${next.id}`, story.id);
    fb = { ...(fb ?? {}), takeover: { from: turn.executor.id, reason: why } };
    turn.executor = next;
    turn.chain.push(next.id);
    turn.handovers += 1;
    await rec.save({ executors: [...turn.chain] });
  }
}

/** Why a checked branch may not merge yet ('' when nothing blocks): new gate failures, weakened tests. */
function blocking(check: CheckResult): string {
  return [describeVerdicts(check.verdicts), check.oracle.join('; ')]
    .filter((p) => p !== '')
    .join(' | ');
}

interface CheckResult {
  readonly verdicts: GateVerdict[];
  readonly oracle: string[];
  readonly perimeter: PerimeterResult;
  readonly runs: GateRun[];
  readonly empty: boolean;
  /** The commit every check judged: the story is merged as this commit or not at all. */
  readonly commit: string;
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
    if (setupFailure !== null) {
      throw new StoryStop(
        'failed',
        `setup failed: ${setupFailure.output.trim().split('\n').slice(-5).join(' | ')}`,
      );
    }
    ctx.checkpoint('after-setup', story.id);
    // Baseline gates run the epic's code: earlier stories' agents wrote it.
    const baseline = await ctx.merge.run(() =>
      guardGitConfig(ctx, story, ctx.epicTree, rec, 'the baseline gates', () => ctx.baseline(base)),
    );

    const turn: TurnState = {
      executor: input.executor,
      chain,
      handovers: 0,
      round: 1,
      rateRetries: 0,
    };
    const judge = ctx.config.judge;
    let judgeRevisions = 0;
    let inPlace = false;
    const judged = async (result: JudgeResult): Promise<void> => {
      const note =
        `judge ${result.executor} cleared` +
        (judgeRevisions > 0 ? ` after ${plural(judgeRevisions, 'revision')}` : '') +
        ` (${formatScores(result.verdict)})`;
      const notes = [...rec.record.notes, note];
      if (!result.independent) {
        notes.push(`judge was not independent: ${result.executor} also coded the story`);
      }
      await rec.save({ notes });
    };
    let feedback: PromptFeedback | undefined;
    /** The commit that passed every check: what is merged, or nothing. */
    let checked = '';
    let fixRoundsLeft = ctx.config.fixRounds;
    let perimeterShown = false;
    let blockedPushback = false;
    for (;;) {
      const { record, feedback: used } = await coderTurn(ctx, story, tree, rec, turn, feedback);
      feedback = used;
      if (record.blockedOn !== undefined) {
        const claim = record.blockedOn;
        const answer = answerBlocked(ctx.settings.plan, story, claim);
        const missing = `missing dependency: ${claim} (suggested plan edit: ${answer.suggestedEdit})`;
        if (blockedPushback) throw new StoryStop('failed', missing);
        let rebuttal = answer.answer;
        if (!answer.decided && ctx.config.executors.some((e) => e.roles.includes('verifier'))) {
          // The plan cannot settle this claim: a verifier decides whether it is real.
          const verdict = await askHelper(ctx, story, tree, rec, turn, {
            role: 'verifier',
            head: await tree.head(),
            schema: verifierAnswerSchema,
            prompt: (repairError) =>
              buildVerifierPrompt({
                epic: ctx.settings.epic,
                plan: ctx.settings.plan,
                story,
                claim,
                planAnswer: answer.answer,
                repairError,
              }),
          });
          if (typeof verdict === 'string') {
            ctx.emit(
              'story',
              `verifier unavailable (${verdict}); answering from the plan`,
              story.id,
            );
          } else if (verdict.value.real) {
            ctx.emit(
              'story',
              `BLOCKED_ON confirmed by ${verdict.executor}: ${verdict.value.reason}`,
              story.id,
            );
            throw new StoryStop(
              'failed',
              `${missing}; confirmed by ${verdict.executor}: ${verdict.value.reason}`,
            );
          } else {
            rebuttal = `${answer.answer}\nA verifier checked your claim and found it is not real: ${verdict.value.reason}`;
          }
        }
        blockedPushback = true;
        ctx.emit('story', `BLOCKED_ON rejected once: ${claim}`, story.id);
        feedback = { blocked: { claim, answer: rebuttal } };
        continue;
      }
      const check = await checkStory(ctx, story, tree, rec, base, baseline);
      // Gates killed by an interrupt prove nothing either way.
      if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
      if (check.empty) {
        if (judge === undefined) throw new StoryStop('failed', 'no changes');
        // Only the judge can say the work is already in place.
        const result = await judgeStory(ctx, story, tree, rec, turn, base, true);
        if (result.verdict.cleared) {
          await judged(result);
          inPlace = true;
          break;
        }
        const findings = verdictFindings(result.verdict);
        if (judgeRevisions >= judge.rounds) {
          throw new StoryStop(
            'failed',
            `no changes, and the judge did not find the story in place after ${plural(judgeRevisions, 'revision')}: ${findings.join('; ')}`,
          );
        }
        judgeRevisions += 1;
        feedback = { noChanges: true, judge: { findings } };
        continue;
      }
      const failing = check.verdicts.filter((v) => v.status === 'new');
      const strays = isClean(check.perimeter) ? [] : describeStrays(check.perimeter);
      if (failing.length > 0 || check.oracle.length > 0) {
        if (fixRoundsLeft <= 0) throw new StoryStop('failed', `gates failed: ${blocking(check)}`);
        fixRoundsLeft -= 1;
        ctx.emit(
          'story',
          `gates failed: ${describeVerdicts(check.verdicts, 1) || check.oracle.join('; ')}`,
          story.id,
        );
        feedback = {
          gateFailures: failing.map((v) => ({
            command: v.command,
            lines: v.newLines,
            output: check.runs.find((r) => r.command === v.command)?.output ?? '',
          })),
          oracle: check.oracle,
          ...(strays.length > 0 && !perimeterShown ? { perimeter: strays } : {}),
        };
        if (strays.length > 0) perimeterShown = true;
        continue;
      }
      ctx.emit('story', 'gates passed', story.id);
      if (strays.length > 0 && !perimeterShown) {
        perimeterShown = true;
        ctx.emit(
          'story',
          `changes outside its perimeter: ${strayPaths(check.perimeter).join(', ')}`,
          story.id,
        );
        feedback = { perimeter: strays };
        continue;
      }
      if (check.perimeter.forbidden.length > 0) {
        throw new StoryStop(
          'failed',
          `refused: ${check.perimeter.forbidden.map((f) => `${f.path} (${f.reason})`).join(', ')}`,
        );
      }
      checked = check.commit;
      if (strays.length > 0) {
        const paths = strayPaths(check.perimeter);
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
        // The gates must hold without the restored paths.
        const again = await checkStory(ctx, story, tree, rec, base, baseline);
        if (again.empty)
          throw new StoryStop(
            'failed',
            'no changes (everything it changed was outside its perimeter)',
          );
        if (blocking(again) !== '') {
          throw new StoryStop(
            'failed',
            `gates failed after restoring paths outside the perimeter: ${blocking(again)}`,
          );
        }
        // The perimeter is judged again on the commit that is now the story.
        if (!isClean(again.perimeter)) {
          const left = [
            ...strayPaths(again.perimeter),
            ...again.perimeter.forbidden.map((f) => f.path),
          ];
          throw new StoryStop(
            'failed',
            `still outside its perimeter after restoring: ${[...new Set(left)].join(', ')}`,
          );
        }
        checked = again.commit;
      }
      if (judge !== undefined) {
        const result = await judgeStory(ctx, story, tree, rec, turn, base, false);
        if (!result.verdict.cleared) {
          const findings = verdictFindings(result.verdict);
          if (judgeRevisions >= judge.rounds) {
            throw new StoryStop(
              'failed',
              `judge did not clear the story after ${plural(judgeRevisions, 'revision')}: ${findings.join('; ')}`,
            );
          }
          judgeRevisions += 1;
          feedback = { judge: { findings } };
          continue;
        }
        await judged(result);
      }
      break;
    }

    if (inPlace) {
      await rec.save(
        {
          status: 'done',
          executors: [...turn.chain],
          notes: [...rec.record.notes, 'already in place'],
          finishedAt: now(),
        },
        ['reason'],
      );
      ctx.emit('status', 'done: already in place; nothing to merge', story.id, { status: 'done' });
      return rec.record;
    }

    await rec.save({ executors: [...turn.chain] });
    // The epic's gates run the merged code; the epic tree shares the repository's configuration.
    const merged = await rec.time('integrate', () =>
      guardGitConfig(
        ctx,
        story,
        ctx.epicTree,
        rec,
        `the merge into ${ctx.settings.epicBranch}`,
        () => integrate(ctx, { story, branch, commit: checked, chain: turn.chain }),
      ),
    );
    await rec.save(
      { status: 'done', mergeCommit: merged, storyCommit: checked, finishedAt: now() },
      ['reason'],
    );
    ctx.emit(
      'status',
      `merged into ${ctx.settings.epicBranch} (${formatChain(turn.chain)})`,
      story.id,
      {
        status: 'done',
        mergeCommit: merged,
      },
    );
    return rec.record;
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
