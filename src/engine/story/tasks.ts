/**
 * A story run as a task plan (core/story/tasks.ts decides): the planning turns, then
 * each task as its own rounds, ticked in the story's record as it passes its checks.
 * The record with its ticks is the checkpoint a resumed story continues from.
 */
import type { ExecutorConfig } from '../../core/config/types.js';
import { EpicflowError } from '../../core/errors.js';
import type { StoryRecord, StoryTask } from '../../core/model.js';
import { buildCoderPrompt } from '../../core/prompt/index.js';
import {
  decideAfterPlanTurn,
  INTERRUPTED,
  nextTask,
  startTaskPlanning,
  taskPlanSection,
  taskResumePoint,
  taskSection,
  tasksEnabled,
  tickTask,
  type PlanTurnFacts,
  type ResumePoint,
  type TaskRequest,
} from '../../core/story/index.js';
import { priceUsage } from '../../core/usage/index.js';
import type { EpicContext } from '../context.js';
import type { WorktreePort } from '../ports.js';
import { StoryStop } from '../stop.js';
import { startTurn, storyTimeLeft } from '../turn-request.js';
import { mergeUsage } from '../usage.js';
import { guardGitConfig, holdAt } from './checks.js';
import type { StoryRun } from './story-run.js';
import { turnAttributes, type TaskTurn } from './turns.js';

/** The rounds of a task that is not the story's last ended: the task is done. */
export interface TaskRounds {
  readonly kind: 'task-done';
  /** The branch head the task ends at. */
  readonly commit: string;
  /** The coder now and the story's coders so far (a handover carries over). */
  readonly executor: ExecutorConfig;
  readonly chain: readonly string[];
  /** The story's tree (checked out anew when another coder took over). */
  readonly tree: WorktreePort;
}

/** Runs a story's rounds (`lifecycle.ts`): to the story's end, or a task's. */
type RoundsRunner = (
  run: StoryRun,
  task?: TaskTurn & { readonly last: boolean },
) => Promise<StoryRecord | TaskRounds>;

function ended(out: StoryRecord | TaskRounds): StoryRecord {
  if ('kind' in out) {
    // Only a task that is not the last ends its rounds this way.
    throw new EpicflowError('internal', 'the rounds of a story ended at a task');
  }
  return out;
}

/**
 * The story's rounds: as one when it runs without tasks; else each task, from the first
 * unchecked one, as its own rounds, ticked when it is done. The last task's rounds go on
 * to the judge and the merge.
 */
export async function runWithTasks(
  ctx: EpicContext,
  rounds: RoundsRunner,
  run: StoryRun,
): Promise<StoryRecord> {
  const { story, rec } = run;
  if (!tasksEnabled(story, ctx.config)) return ended(await rounds(run));
  let tasks = rec.record.tasks;
  const planned = tasks === undefined;
  if (tasks === undefined) tasks = await planTasks(ctx, run);
  if (tasks.length === 0) return ended(await rounds(run));
  let current = run;
  for (let first = true; ; first = false) {
    const index = nextTask(tasks) ?? tasks.length - 1;
    const task = tasks[index] as StoryTask;
    const total = tasks.length;
    const last = index === total - 1;
    // Work committed before this run's plan was not a task's; a resumed plan continues.
    const resume: ResumePoint =
      first && !planned
        ? taskResumePoint(run.resume, rec.record.progress, tasks, index)
        : { kind: 'code' };
    if (first && !planned && index > 0) {
      ctx.emit('story', `resuming at task ${index + 1} of ${total}`, story.id);
    }
    ctx.emit('story', `task ${index + 1} of ${total}: ${task.title}`, story.id);
    const turn: TaskTurn & { last: boolean } = { section: taskSection(tasks, index), last };
    const out = await rounds({ ...current, resume }, turn);
    if (!('kind' in out)) return out;
    tasks = tickTask(tasks, index, out.commit, turn.findings);
    await rec.save({ tasks });
    ctx.emit('story', `task ${index + 1} of ${total} done: ${task.title}`, story.id);
    ctx.checkpoint('after-task', story.id);
    current = { ...current, executor: out.executor, chain: out.chain, tree: out.tree };
  }
}

/**
 * The planning turns: the coder answers a task list (a repair turn, a re-plan, as
 * core/story decides). The plan, or none, is saved in the record with its notes.
 */
async function planTasks(ctx: EpicContext, run: StoryRun): Promise<readonly StoryTask[]> {
  const { story, rec } = run;
  let decision = startTaskPlanning();
  for (;;) {
    switch (decision.next) {
      case 'run': {
        const { tasks, notes } = decision;
        await rec.save({ tasks, notes: [...rec.record.notes, ...notes] });
        for (const note of notes) ctx.emit('story', note, story.id);
        ctx.emit('story', `task plan: ${tasks.length} tasks`, story.id);
        return tasks;
      }
      case 'without':
        await rec.save({ tasks: [], notes: [...rec.record.notes, decision.note] });
        ctx.emit('story', `warning: ${decision.note}`, story.id);
        return [];
      case 'ask':
        decision = decideAfterPlanTurn(
          decision.state,
          await planTurn(ctx, run, decision.request),
          story,
          ctx.settings.plan,
          ctx.settings.configPaths,
        );
        break;
    }
  }
}

/** One planning turn of the story's coder: it only answers; anything it changed is put back. */
async function planTurn(
  ctx: EpicContext,
  run: StoryRun,
  request: TaskRequest,
): Promise<PlanTurnFacts> {
  const { story, tree, rec, turn, executor } = run;
  if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
  const head = await tree.head();
  const prompt = buildCoderPrompt({
    epic: ctx.settings.epic,
    plan: ctx.settings.plan,
    story,
    round: turn.round,
    gates: ctx.storyScope(story).gates.map((g) => g.label),
    houseRules: ctx.settings.houseRules,
    ...(rec.record.revision === undefined ? {} : { review: rec.record.revision }),
    tasks: taskPlanSection(story, request),
  });
  // The story's wall-clock limit counts from its start, as for its other coder turns.
  const timeoutMs = storyTimeLeft(ctx, rec.record.startedAt);
  const round = turn.round;
  const what = request.repair !== undefined ? 'repairing its task list' : 'planning tasks';
  ctx.emit('story', `round ${round}: ${executor.id} ${what}`, story.id);
  const doing = `round ${round} (${executor.id} ${what})`;
  const result = await guardGitConfig(ctx, story, tree, rec, doing, () =>
    rec.time(
      'code',
      () =>
        rec.logs.capture('coder', (log) =>
          startTurn(
            ctx,
            executor,
            { story: story.id, round, role: 'coder', prompt, worktree: tree.path, timeoutMs },
            log,
          ),
        ),
      { 'epicflow.round': round, 'epicflow.executor': executor.id },
      turnAttributes,
    ),
  );
  turn.round += 1;
  await rec.save({
    usage: mergeUsage(rec.record.usage, priceUsage(result.usage, ctx.config.prices)),
  });
  // A planning turn changes nothing: whatever it wrote is put back.
  await holdAt(ctx, story, tree, rec, head, `the task planning turn (${executor.id})`);
  if (ctx.interrupt.signal.aborted) throw new StoryStop('waiting', INTERRUPTED);
  if (result.outcome !== 'ok') {
    return { kind: 'stopped', detail: `${result.outcome}: ${result.detail.split('\n')[0] ?? ''}` };
  }
  return { kind: 'answered', message: result.finalMessage };
}
