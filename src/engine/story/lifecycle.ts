/**
 * The story lifecycle: branch, catch up, setup, then the rounds (coder turns,
 * gates against the baseline with the oracle guard, perimeter, judge) decided by
 * the core/story reducer and performed here, then integrate into the epic branch,
 * recording the outcome after every step (the merge or the in-place end in finish.ts).
 * Nothing here throws for a story's own failure: the outcome is a record.
 */
import { join } from 'node:path';
import type { ExecutorConfig } from '../../core/config/types.js';
import { describeErrorLine, EpicflowError, isEpicflowError } from '../../core/errors.js';
import { attemptOf, usageTotals } from '../../core/epic/rules.js';
import { foldFolders, someOf } from '../../core/paths.js';
import { storyBranchName, type Story, type StoryRecord } from '../../core/model.js';
import {
  decideAfterCatchUp,
  decideAfterCheck,
  decideAfterExclusion,
  decideAfterHandover,
  decideAfterJudge,
  decideAfterRedMerge,
  decideAfterReview,
  decideAfterSetup,
  decideAfterTurn,
  decideAfterVerifier,
  INTERRUPTED,
  resumePoint,
  resumeRounds,
  setupFailedReason,
  withLog,
  type CheckFacts,
  type FailedSetup,
  type Decision,
  type StoryAction,
  type StoryRounds,
} from '../../core/story/index.js';
import type { EpicContext } from '../context.js';
import type { WorktreePort } from '../ports.js';
import { StoryStop } from '../stop.js';
import { NO_TRACE, type TraceSpan } from '../trace.js';
import { checkStory, guardGitConfig, restoreStrays } from './checks.js';
import { performEffects, Recorder } from './recorder.js';
import { runWithTasks, type TaskRounds } from './tasks.js';
import { finishInPlace, mergeStory } from './finish.js';
import { judgeStory, verifyClaim } from './helper-calls.js';
import { reviewStory } from './review-calls.js';
import type { StoryRun } from './story-run.js';
import {
  coderTurn,
  signalRoster,
  type TaskTurn,
  type TurnCounter,
  type TurnScope,
} from './turns.js';

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

type Step = Exclude<StoryAction, { kind: 'integrate' | 'in-place' | 'stop' | 'task-done' }>;

/** What a judge or verifier call needs of the rounds: whom to avoid, the retries spent. */
function helperBudget(state: StoryRounds): {
  coders: readonly string[];
  transientRetries: number;
} {
  return { coders: state.chain, transientRetries: state.transientRetries };
}

/** Performs one step that does not end the story, and decides on its result. */
async function perform(
  ctx: EpicContext,
  run: StoryRun,
  scope: TurnScope,
  state: StoryRounds,
  action: Step,
): Promise<Decision> {
  const { story, tree, rec, base } = run;
  const checks = async (): Promise<CheckFacts> => {
    const check = await checkStory(ctx, story, tree, rec, base, run.baseline);
    // Gates killed by an interrupt prove nothing either way.
    return { ...check, interrupted: ctx.interrupt.signal.aborted };
  };
  switch (action.kind) {
    case 'code':
      return decideAfterTurn(state, await coderTurn(scope, state.executor, action));
    case 'exclude': {
      const exclusion = await signalRoster(ctx, action.executor, action.signal);
      return decideAfterExclusion(state, {
        exclusion: exclusion?.reason ?? null,
        exhausted: ctx.roster.exhausted(),
      });
    }
    case 'hand-over': {
      const next = await ctx.roster.handover(story.id, state.chain);
      // A takeover starts from the commit: nothing the coder before it left outside its
      // commits (ignored files, a filled cache folder) is in the tree it gets.
      if (next !== null) {
        run.tree = await run.fresh();
        scope.tree = run.tree;
      }
      return decideAfterHandover(state, { next });
    }
    case 'verify':
      return decideAfterVerifier(
        state,
        await verifyClaim(scope, helperBudget(state), action.claim, base),
      );
    case 'check':
      return decideAfterCheck(state, await checks());
    case 'restore':
      await restoreStrays(ctx, story, tree, rec, base, action.paths);
      // The gates must hold without the restored paths, the perimeter is judged again.
      return decideAfterCheck(state, await checks());
    case 'catch-up':
      return decideAfterCatchUp(state, { moved: await catchUpBeforeJudge(ctx, run) });
    case 'judge': {
      const facts = await judgeStory(
        scope,
        helperBudget(state),
        base,
        action.inPlace,
        action.openReview,
      );
      if (facts.kind === 'verdict') {
        rec.span.set({
          'epicflow.judge.cleared': facts.verdict.cleared,
          'epicflow.judge.executor': facts.executor,
        });
      }
      return decideAfterJudge(state, facts);
    }
    case 'review':
      return decideAfterReview(state, await reviewStory(scope, helperBudget(state), base, action));
  }
}

/**
 * The rounds: steps performed as the reducer decides, until the story ends, or, for a
 * task that is not the story's last (`task.last` false), until the task is done.
 */
async function runRounds(
  ctx: EpicContext,
  run: StoryRun,
  task?: TaskTurn & { readonly last: boolean },
): Promise<StoryRecord | TaskRounds> {
  const { story, rec } = run;
  const scope: TurnScope = {
    ctx,
    story,
    tree: run.tree,
    rec,
    turn: run.turn,
    ...(task === undefined ? {} : { task }),
  };
  let decision = resumeRounds(
    {
      fixRounds: ctx.config.fixRounds,
      mergeRevisions: ctx.config.mergeRevisions,
      judgeRounds: ctx.config.judge?.rounds,
      reviewRounds: ctx.config.review?.rounds,
      deferNonBlocking: ctx.config.judge?.deferNonBlocking === true,
      verifier: ctx.config.executors.some((e) => e.roles.includes('verifier')),
      retries: ctx.config.retries,
      ...(task !== undefined && !task.last ? { taskEnd: true } : {}),
    },
    run.executor,
    run.chain,
    run.resume,
  );
  for (;;) {
    await performEffects(ctx, story, rec, decision.effects);
    const { state, next } = decision;
    switch (next.kind) {
      case 'stop':
        throw new StoryStop(next.status, next.reason, undefined, next.outgrown);
      case 'in-place':
        return finishInPlace(ctx, run, state.chain);
      case 'task-done':
        return {
          kind: 'task-done',
          commit: next.commit ?? (await run.tree.head()),
          executor: state.executor,
          chain: state.chain,
          tree: run.tree,
        };
      case 'integrate':
        try {
          return await mergeStory(ctx, run, next.commit, state.chain);
        } catch (e) {
          if (!(e instanceof StoryStop) || e.redMerge === undefined) throw e;
          const decided = decideAfterRedMerge(state, { failures: e.redMerge, reason: e.reason });
          // A revision works where the red lines are: on the epic head as it is now.
          if (decided.next.kind === 'code') await catchUpAgain(ctx, run);
          decision = decided;
          break;
        }
      default:
        decision = await perform(ctx, run, scope, state, next);
    }
  }
}

/** The story's branch takes the epic head again (epic side wins), and is gated against it. */
async function catchUpAgain(ctx: EpicContext, run: StoryRun): Promise<void> {
  const { story, tree, rec } = run;
  const base = ctx.epicHead;
  const caught = await tree.catchUp(base);
  if (caught.merged) ctx.emit('story', `caught up with ${ctx.settings.epicBranch}`, story.id);
  run.baseline = await ctx.merge.run(
    () =>
      guardGitConfig(ctx, story, ctx.epicTree, rec, 'the baseline gates', () =>
        ctx.baseline(base, ctx.storyScope(story)),
      ),
    `the baseline gates of ${story.id}`,
  );
  run.base = base;
}

/**
 * The epic head as it stands now (where other jobs merge stories too, as it is upstream),
 * taken into the branch when it moved since the branch last took it.
 */
async function catchUpBeforeJudge(ctx: EpicContext, run: StoryRun): Promise<boolean> {
  await ctx.followUpstream();
  if (ctx.epicHead === run.base) return false;
  await catchUpAgain(ctx, run);
  return true;
}

interface StoryRunInput {
  readonly story: Story;
  readonly executor: ExecutorConfig;
  readonly prior: StoryRecord | null;
}

/** Runs one story to its outcome, traced as a span of the epic's; always returns the saved record. */
export async function runStory(ctx: EpicContext, input: StoryRunInput): Promise<StoryRecord> {
  const span = (ctx.ports.trace ?? NO_TRACE).child(`story ${input.story.id}`, {
    'epicflow.story': input.story.id,
    'epicflow.executor': input.executor.id,
  });
  const record = await runStoryOnce(ctx, input, span);
  const totals = usageTotals([record]);
  span.set({
    'epicflow.status': record.status,
    'epicflow.attempt': record.attempt,
    'epicflow.executors': record.executors.join(' → '),
    'epicflow.tokens': totals.tokens,
    ...(totals.priced ? { 'epicflow.cost_usd': totals.usd } : {}),
    ...(record.reason === undefined ? {} : { 'epicflow.reason': record.reason }),
  });
  span.end(record.status === 'failed' ? (record.reason ?? 'failed') : undefined);
  return record;
}

async function runStoryOnce(
  ctx: EpicContext,
  input: StoryRunInput,
  span: TraceSpan,
): Promise<StoryRecord> {
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
  const rec = new Recorder(
    ctx,
    {
      version: 1,
      epic,
      story: story.id,
      planHash: hash,
      status: 'active',
      branch,
      // A crash mid-story resumes the same attempt; a retry or a restart is a new one.
      attempt: attemptOf(prior, hash),
      executors: chain,
      usage: prior?.usage ?? [],
      notes: sameEntry ? prior.notes : [],
      startedAt: now(),
      timings: sameEntry ? prior.timings : {},
      // Where an interrupted attempt stands survives until the story ends.
      ...(sameEntry && prior.progress !== undefined ? { progress: prior.progress } : {}),
      // A review round's comments stay with the story's record (and reach its prompt).
      ...(prior?.revision === undefined ? {} : { revision: prior.revision }),
      // So does the note of an approved retro fix.
      ...(prior?.retroNote === undefined ? {} : { retroNote: prior.retroNote }),
      // Answers kept for a later run over the same fingerprint (what the call read).
      ...(sameEntry && prior.judged !== undefined ? { judged: prior.judged } : {}),
      ...(sameEntry && prior.verified !== undefined ? { verified: prior.verified } : {}),
      ...(sameEntry && prior.reviewed !== undefined ? { reviewed: prior.reviewed } : {}),
      // The story's review and judge rounds so far (its findings log is made of them).
      ...(sameEntry && prior.evaluations !== undefined ? { evaluations: prior.evaluations } : {}),
      // The task plan with its ticks: a resumed story continues at its first unchecked task.
      ...(sameEntry && prior.tasks !== undefined ? { tasks: prior.tasks } : {}),
      // A follow-up round's findings reach its prompts; what the merge deferred is the judge's to say again.
      ...(sameEntry && prior.deferredRound !== undefined
        ? { deferredRound: prior.deferredRound }
        : {}),
    },
    span,
  );
  const worktreePath = join(ctx.settings.worktreesDir, story.id);
  try {
    await discardIfChanged(ctx, story, prior, branch, worktreePath);
    await rec.save({});
    ctx.emit('status', `started with ${input.executor.id}`, story.id, {
      status: 'active',
      executor: input.executor.id,
    });
    let tree = await prepareBranch(ctx, story, branch, worktreePath);
    const base = ctx.epicHead;
    const caught = await tree.catchUp(base);
    if (caught.merged) ctx.emit('story', `caught up with ${ctx.settings.epicBranch}`, story.id);
    // A resumed branch holds the agent's earlier work, which setup may run (package scripts).
    // A tree epicflow just checked out is a commit's, as a check's is: its setup may come
    // from the setup cache and be kept there. One an agent worked in (after a repair turn)
    // is neither.
    const setup = async (
      checkedOut: boolean,
    ): Promise<(FailedSetup & { command: string }) | null> => {
      const scope = ctx.storyScope(story);
      const failure = await guardGitConfig(ctx, story, tree, rec, 'setup', () =>
        rec.time('setup', () =>
          rec.logs.capture('setup', async (log) =>
            checkedOut
              ? ctx.setupOn(tree.path, await tree.head(), log, story.id, scope)
              : ctx.runSetup(tree.path, log, story.id, scope),
          ),
        ),
      );
      // What setup wrote (a lockfile of `npm install`), passing or not, is neither the
      // coder's work nor a stray. Without setup the tree is the commit epicflow checked out.
      const setAside = ctx.storyScope(story).setup.length === 0 ? [] : await tree.setAsideChanges();
      if (setAside.length > 0) {
        ctx.emit(
          'story',
          `setup changed ${someOf(foldFolders(setAside), 10)}: left out of the story's commits`,
          story.id,
        );
      }
      return failure;
    };
    const turn: TurnCounter = { round: 1 };
    /** The tree a takeover gets: the branch checked out anew, setup run on it. */
    const fresh = async (): Promise<WorktreePort> => {
      tree = await ctx.ports.git.addWorktree(worktreePath, branch);
      ctx.emit('story', `the tree checked out anew from ${branch} for the next coder`, story.id);
      const failure = await setup(true);
      if (failure !== null) ctx.emit('story', setupFailedReason(failure), story.id);
      return tree;
    };
    let setupFailure = await setup(true);
    let repaired = false;
    for (;;) {
      const next = decideAfterSetup({
        failed: setupFailure !== null,
        setupRepair: ctx.config.setupRepair,
        repaired,
      });
      if (next === 'go') break;
      if (setupFailure === null) break;
      const { output } = setupFailure;
      if (next === 'fail') throw new StoryStop('failed', setupFailedReason(setupFailure, repaired));
      const reason = setupFailedReason(setupFailure);
      repaired = true;
      ctx.emit('story', `${reason}; a coder turn to repair it`, story.id);
      const repair = await coderTurn({ ctx, story, tree, rec, turn }, input.executor, {
        feedback: { setup: { command: setupFailure.command, output } },
        waitMs: 0,
      });
      // The repair is the story's first commit, not its work: the story's turns start after it.
      await rec.save({}, ['progress']);
      if (repair.interrupted) throw new StoryStop('waiting', INTERRUPTED);
      if (repair.outcome !== 'ok') {
        throw new StoryStop(
          'failed',
          `${reason}; the repair turn failed (${input.executor.id}): ${repair.detail.split('\n')[0] ?? ''}`,
        );
      }
      setupFailure = await setup(false);
      if (setupFailure === null) ctx.emit('story', 'setup passed after the repair turn', story.id);
    }
    ctx.checkpoint('after-setup', story.id);
    // Baseline gates run the epic's code: earlier stories' agents wrote it.
    const baseline = await ctx.merge.run(
      () =>
        guardGitConfig(ctx, story, ctx.epicTree, rec, 'the baseline gates', () =>
          ctx.baseline(base, ctx.storyScope(story)),
        ),
      `the baseline gates of ${story.id}`,
    );
    const head = await tree.head();
    const resume = resumePoint({
      progress: sameEntry ? prior.progress : undefined,
      head,
      // A branch still at the epic head has changed nothing.
      changed: head !== base && (await tree.changedPaths(base, head)).length > 0,
      judge: ctx.config.judge !== undefined,
    });

    return await runWithTasks(ctx, (r, task) => runRounds(ctx, r, task), {
      story,
      branch,
      tree,
      rec,
      base,
      baseline,
      executor: input.executor,
      chain,
      resume,
      turn,
      fresh,
    });
  } catch (e) {
    const stop =
      e instanceof StoryStop
        ? e
        : isEpicflowError(e, 'halt')
          ? new StoryStop('failed', `not merged: ${e.message}`)
          : new StoryStop('failed', describeErrorLine(e));
    const status = stop.status;
    // The reason is short; the whole output of the step that failed is in its log.
    const reason = status === 'failed' ? withLog(stop.reason, rec.logs.last) : stop.reason;
    // A failed story's next attempt starts with a coder turn; an interrupted one resumes.
    const outgrown = status === 'failed' ? stop.outgrown : undefined;
    await rec.save(
      { status, reason, finishedAt: now(), ...(outgrown === undefined ? {} : { outgrown }) },
      status === 'failed'
        ? ['progress', 'tasks', ...(outgrown === undefined ? (['outgrown'] as const) : [])]
        : ['outgrown'],
    );
    ctx.emit('status', `${status}: ${reason}`, story.id, { status, reason });
    if (!(e instanceof StoryStop) && !(e instanceof EpicflowError)) {
      // A bug of ours, not the story's: keep it visible in events.jsonl.
      ctx.emit('story', `internal error: ${String((e as Error).stack ?? e)}`, story.id);
    }
    return rec.record;
  }
}
