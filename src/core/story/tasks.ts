/**
 * A story run as a task plan (`tasks: true` in its plan entry or in the config). The
 * coder's first turn answers a list of small tasks, each with an observable outcome and
 * the acceptance lines it satisfies; each task then runs as its own rounds (a turn, the
 * gates after it), and the plan with its ticks is the story's checkpoint. The policy, in
 * one place:
 *
 * - an answer that is not a valid task list gets one repair turn, then the story runs
 *   without tasks and says so;
 * - a task naming another story's paths is dropped with a note; a task naming paths
 *   outside the story's perimeter, or a plan leaving an acceptance line uncovered, gets
 *   one re-plan; still wrong after it, the story runs without tasks and says so;
 * - a resumed story continues at its first unchecked task, on its existing commits: the
 *   checks first when that task committed work since the last tick, else its turn;
 * - a task whose turn changed nothing is completed, not failed.
 */
import { z } from 'zod';
import { extractAnswer } from '../judge/verdict.js';
import type { Plan, Story, StoryProgress, StoryTask } from '../model.js';
import { classifyChanges } from '../perimeter/index.js';
import { isWithin, normalisePath } from '../paths.js';
import { bullets, oneLine, quote } from '../prompt/clean.js';
import type { ResumePoint } from './resume.js';

/** At most this much of a task's "Findings" is carried into the next task's prompt. */
const FINDINGS_MAX_CHARS = 2000;

/** At most this many tasks in a plan: each is a turn of its own. */
export const MAX_TASKS = 20;

/** The task list a coder answers (one JSON object). */
const taskListSchema = z.object({
  tasks: z
    .array(
      z.object({
        title: z.string().trim().min(1),
        outcome: z.string().trim().min(1),
        paths: z.array(z.string()).default([]),
        satisfies: z.array(z.number().int().positive()).default([]),
      }),
    )
    .min(1)
    .max(MAX_TASKS),
});
type TaskList = z.infer<typeof taskListSchema>;

/** Whether a story runs as a task plan: its own `tasks`, else the config's. */
export function tasksEnabled(story: Story, config: { readonly tasks?: boolean }): boolean {
  return story.tasks ?? config.tasks ?? false;
}

/** What a task list says against the story's perimeter and acceptance lines. */
interface TaskListCheck {
  /** The tasks that stay, in order. */
  readonly kept: readonly StoryTask[];
  /** One note per task dropped for naming another story's paths. */
  readonly dropped: readonly string[];
  /** What a re-plan must fix (paths outside the perimeter, uncovered lines); empty: none. */
  readonly problems: readonly string[];
}

/** Checks a task list: other stories' paths drop a task, the rest must fit and cover. */
function checkTaskList(
  list: TaskList,
  story: Story,
  plan: Plan,
  configPaths: readonly string[],
): TaskListCheck {
  const others = plan.stories.filter((s) => s.id !== story.id);
  const kept: StoryTask[] = [];
  const dropped: string[] = [];
  const problems: string[] = [];
  for (const [index, task] of list.tasks.entries()) {
    const label = `task ${index + 1} (${oneLine(task.title)})`;
    const paths = task.paths.map(normalisePath).filter((p) => p !== '');
    const owner = others.find((o) =>
      paths.some((p) => o.owns.some((own) => isWithin(p, own) && !inStory(p, story))),
    );
    if (owner !== undefined) {
      const named = paths.filter((p) => owner.owns.some((own) => isWithin(p, own)));
      dropped.push(
        `${label} dropped: it names ${named.map((p) => `\`${p}\``).join(', ')} of story ${owner.id}`,
      );
      continue;
    }
    const perimeter = classifyChanges({
      changes: paths.map((path) => ({ path, status: 'modified', mode: 'file' })),
      owns: story.owns,
      reads: story.reads,
      configPaths,
      allowWorkflowChanges: false,
    });
    const outside = [...perimeter.outside, ...perimeter.forbidden.map((f) => f.path)];
    if (outside.length > 0) {
      problems.push(
        `${label} names ${outside.map((p) => `\`${p}\``).join(', ')}, outside this story's perimeter`,
      );
    }
    kept.push({
      title: oneLine(task.title),
      outcome: oneLine(task.outcome),
      paths,
      satisfies: [...new Set(task.satisfies)].sort((a, b) => a - b),
      done: false,
    });
  }
  const lines = story.acceptance.length;
  for (const [index, task] of kept.entries()) {
    const beyond = task.satisfies.filter((n) => n > lines);
    if (beyond.length > 0) {
      problems.push(
        `task ${index + 1} (${task.title}) says it satisfies ${beyond.join(', ')}, but the story has ${lines} acceptance line${lines === 1 ? '' : 's'}`,
      );
    }
  }
  const covered = new Set(kept.flatMap((t) => t.satisfies));
  for (const [index, line] of story.acceptance.entries()) {
    if (!covered.has(index + 1)) {
      problems.push(`acceptance line ${index + 1} is satisfied by no task: ${oneLine(line)}`);
    }
  }
  if (kept.length === 0 && problems.length === 0) {
    problems.push('no task is left once the tasks naming other stories’ paths are dropped');
  }
  return { kept, dropped, problems };
}

function inStory(path: string, story: Story): boolean {
  return [...story.owns, ...story.reads].some((p) => isWithin(path, p));
}

/** What the planning turns decided so far. */
export interface TaskPlanning {
  readonly repaired: boolean;
  readonly replanned: boolean;
}

/** What the next planning turn is asked besides the plan request. */
export interface TaskRequest {
  /** Why the last answer was not a task list (the repair turn). */
  readonly repair?: string;
  /** What the re-plan must fix. */
  readonly replan?: readonly string[];
}

type PlanningDecision =
  | { readonly next: 'ask'; readonly state: TaskPlanning; readonly request: TaskRequest }
  | {
      readonly next: 'run';
      readonly tasks: readonly StoryTask[];
      /** Notes for the story (dropped tasks). */
      readonly notes: readonly string[];
    }
  | { readonly next: 'without'; readonly note: string };

/** A planning turn as it ended: its final message, or why there is none. */
export type PlanTurnFacts =
  | { readonly kind: 'answered'; readonly message: string }
  | { readonly kind: 'stopped'; readonly detail: string };

export function startTaskPlanning(): PlanningDecision {
  return { next: 'ask', state: { repaired: false, replanned: false }, request: {} };
}

const WITHOUT = 'the story runs without tasks';

/** After a planning turn: a task list to run, a repair or re-plan turn, or no tasks. */
export function decideAfterPlanTurn(
  state: TaskPlanning,
  facts: PlanTurnFacts,
  story: Story,
  plan: Plan,
  configPaths: readonly string[],
): PlanningDecision {
  if (facts.kind === 'stopped') {
    return {
      next: 'without',
      note: `the task plan turn ended without a task list (${oneLine(facts.detail).slice(0, 200)}): ${WITHOUT}`,
    };
  }
  const answer = extractAnswer(facts.message, taskListSchema);
  if (!answer.ok) {
    if (!state.repaired) {
      return {
        next: 'ask',
        state: { ...state, repaired: true },
        request: { repair: answer.error },
      };
    }
    return {
      next: 'without',
      note: `the task list was not valid after one repair turn (${oneLine(answer.error).slice(0, 200)}): ${WITHOUT}`,
    };
  }
  const check = checkTaskList(answer.value, story, plan, configPaths);
  if (check.problems.length > 0) {
    if (!state.replanned) {
      return {
        next: 'ask',
        state: { ...state, replanned: true },
        request: { replan: check.problems },
      };
    }
    return {
      next: 'without',
      note: `the re-planned task list still does not fit (${check.problems.join('; ')}): ${WITHOUT}`,
    };
  }
  return { next: 'run', tasks: check.kept, notes: check.dropped };
}

/** The request of a planning turn: what to answer, and what the last answer got wrong. */
export function taskPlanSection(story: Story, request: TaskRequest): string[] {
  const example = {
    tasks: [
      {
        title: 'Parse the input',
        outcome: 'parse("a,b") returns ["a", "b"]; a test shows it',
        paths: [story.owns[0] ?? 'src/example.ts'],
        satisfies: story.acceptance.length > 0 ? [1] : [],
      },
    ],
  };
  const parts = [
    '## First, plan this story as tasks',
    `Do not change any file in this turn: answer with a list of small tasks (at most ${MAX_TASKS}), in the order they ` +
      'are done, as one JSON object in a ```json block. Each task has a `title`, an observable ' +
      '`outcome` (what a test or a command shows once it is done), the `paths` it changes ' +
      '(only your owned paths) and `satisfies`: the numbers of the acceptance lines ' +
      '("Done when", counted from 1) it satisfies. Every acceptance line must be satisfied by some task. ' +
      'Each task then runs as its own turn, with the gates after it.',
    '```json',
    JSON.stringify(example, null, 2),
    '```',
  ];
  if (story.acceptance.length > 0) {
    parts.push(
      'The acceptance lines, numbered:',
      story.acceptance.map((line, i) => `${i + 1}. ${oneLine(line)}`).join('\n'),
    );
  }
  if (request.repair !== undefined) {
    parts.push(
      '## Your last answer was not a task list',
      `${oneLine(request.repair)}. Answer again with the JSON object only.`,
    );
  }
  if (request.replan !== undefined) {
    parts.push(
      '## Plan again',
      'Your task list does not fit the story; fix these and answer the whole list again:',
      bullets(request.replan.map(oneLine)),
    );
  }
  return parts;
}

/** The index of the first unchecked task, or null when every one is ticked. */
export function nextTask(tasks: readonly StoryTask[]): number | null {
  const index = tasks.findIndex((t) => !t.done);
  return index < 0 ? null : index;
}

/** The plan with task `index` ticked at `commit`, with its findings. */
export function tickTask(
  tasks: readonly StoryTask[],
  index: number,
  commit: string,
  findings: string | undefined,
): StoryTask[] {
  return tasks.map((t, i) =>
    i === index ? { ...t, done: true, commit, ...(findings === undefined ? {} : { findings }) } : t,
  );
}

/**
 * Where a resumed story's current task starts: a task that committed nothing since the
 * last tick starts with its turn (the checks of the work before it passed already);
 * otherwise as the story would resume (`resumePoint`).
 */
export function taskResumePoint(
  point: ResumePoint,
  progress: StoryProgress | undefined,
  tasks: readonly StoryTask[],
  index: number,
): ResumePoint {
  const ticked = tasks
    .slice(0, index)
    .filter((t) => t.done)
    .at(-1);
  if (ticked === undefined || progress === undefined) return point;
  return progress.commit === ticked.commit ? { kind: 'code' } : point;
}

/** The "Findings" section at the end of a coder's reply, capped; undefined when there is none. */
export function parseFindings(message: string): string | undefined {
  const match = /^(?:#{1,6}\s*)?\**Findings\**\s*:?\s*$/im.exec(message);
  if (match === null) return undefined;
  const text = message.slice(match.index + match[0].length).trim();
  if (text === '') return undefined;
  return text.length > FINDINGS_MAX_CHARS ? `${text.slice(0, FINDINGS_MAX_CHARS)}…` : text;
}

/** The coder prompt's section for task `index`: the task, the plan around it, the findings before it. */
export function taskSection(tasks: readonly StoryTask[], index: number): string[] {
  const task = tasks[index];
  if (task === undefined) return [];
  const total = tasks.length;
  const parts = [
    `## Your task now: task ${index + 1} of ${total}`,
    `**${task.title}**`,
    `Done when: ${task.outcome}`,
  ];
  if (task.paths.length > 0) parts.push(`Paths: ${task.paths.map((p) => `\`${p}\``).join(', ')}`);
  parts.push(
    'The task plan:',
    tasks
      .map(
        (t, i) =>
          `${i + 1}. [${t.done ? 'x' : i === index ? '>' : ' '}] ${t.title}` +
          (t.satisfies.length > 0 ? ` (Satisfies: ${t.satisfies.join(', ')})` : ''),
      )
      .join('\n'),
    'Do only this task in this turn; the tasks after it come in later turns. ' +
      'End your reply with a short `## Findings` section: what the next task should know ' +
      '(decisions, names, surprises).',
  );
  const before = tasks
    .slice(0, index)
    .filter((t) => t.done && t.findings !== undefined)
    .at(-1);
  if (before?.findings !== undefined) {
    parts.push('## Findings of the task before', quote(before.findings));
  }
  return parts;
}
