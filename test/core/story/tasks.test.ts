import { describe, expect, it } from '@jest/globals';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import type { Plan, StoryTask } from '../../../src/core/model.js';
import { parsePlan } from '../../../src/core/plan/index.js';
import { planYaml } from '../../../src/core/planner/render.js';
import {
  decideAfterCheck,
  decideAfterPlanTurn,
  decideAfterTurn,
  MAX_TASKS,
  parseFindings,
  startRounds,
  startTaskPlanning,
  taskResumePoint,
  tasksEnabled,
  taskSection,
  tickTask,
  type RoundRules,
  type TaskPlanning,
} from '../../../src/core/story/index.js';

function planOf(yaml: string): Plan {
  const result = parsePlan(`\`\`\`epicflow\n${yaml}\`\`\`\n`);
  if (!result.ok) throw new Error(JSON.stringify(result.violations));
  return result.plan;
}

const plan = planOf(`stories:
  - id: s
    title: S
    description: Build s.
    owns: [src/s]
    reads: [docs/api.md]
    acceptance: [one, two]
    tasks: true
  - id: o
    title: O
    description: Build o.
    owns: [src/o]
`);
const s = plan.stories[0]!;
const o = plan.stories[1]!;
const fresh: TaskPlanning = { repaired: false, replanned: false };
const json = (tasks: unknown[]): string => `\`\`\`json\n${JSON.stringify({ tasks })}\n\`\`\``;
const decide = (state: TaskPlanning, message: string) =>
  decideAfterPlanTurn(state, { kind: 'answered', message }, s, plan, ['.github/epicflow.yml']);

describe('the task plan of a story', () => {
  it('is on when the story says so, else as the config says', () => {
    expect(tasksEnabled(s, { tasks: false })).toBe(true);
    expect(tasksEnabled(o, { tasks: true })).toBe(true);
    expect(tasksEnabled(o, { tasks: false })).toBe(false);
    expect(tasksEnabled({ ...o, tasks: false }, { tasks: true })).toBe(false);
  });

  it('`tasks` is part of the plan entry and its hash, and is written back; absent, hashes stay', () => {
    const without = planOf(`stories:
  - id: s
    title: S
    description: Build s.
    owns: [src/s]
    reads: [docs/api.md]
    acceptance: [one, two]
`);
    expect(s.tasks).toBe(true);
    expect(without.stories[0]?.tasks).toBeUndefined();
    // The hash this entry had before plans could say `tasks`.
    expect(without.hashes.s).toBe('50eee9f95f5eedc1');
    expect(without.hashes.s).not.toBe(plan.hashes.s);
    expect(planYaml(plan.stories)).toContain('tasks: true');
    expect(planOf(planYaml(plan.stories)).hashes).toEqual(plan.hashes);
  });

  it('a list that fits and covers every acceptance line runs as it is', () => {
    const d = decide(
      fresh,
      json([
        { title: 'A', outcome: 'a works', paths: ['./src/s/a.ts', 'docs/api.md'], satisfies: [1] },
        { title: 'B', outcome: 'b works', paths: ['src/s/b.ts'], satisfies: [2, 2] },
      ]),
    );
    expect(d).toEqual({
      next: 'run',
      notes: [],
      tasks: [
        {
          title: 'A',
          outcome: 'a works',
          paths: ['src/s/a.ts', 'docs/api.md'],
          satisfies: [1],
          done: false,
        },
        { title: 'B', outcome: 'b works', paths: ['src/s/b.ts'], satisfies: [2], done: false },
      ],
    });
  });

  it('not a task list: one repair turn, then no tasks', () => {
    const first = decide(fresh, 'I will do it');
    expect(first).toMatchObject({
      next: 'ask',
      request: { repair: 'no JSON object found in the final message' },
    });
    if (first.next !== 'ask') throw new Error('expected a repair');
    expect(decide(first.state, '{"tasks": []}')).toEqual({
      next: 'without',
      note: 'the task list was not valid after one repair turn (tasks: Too small: expected array to have >=1 items): the story runs without tasks',
    });
  });

  it("outside paths and uncovered lines get one re-plan; other stories' paths drop the task", () => {
    const first = decide(
      fresh,
      json([
        { title: 'A', outcome: 'a', paths: ['src/s/a.ts', 'README.md'], satisfies: [1, 3] },
        { title: 'B', outcome: 'b', paths: ['src/o/b.ts'], satisfies: [2] },
        { title: 'C', outcome: 'c', paths: ['.github/epicflow.yml'] },
      ]),
    );
    expect(first).toMatchObject({
      next: 'ask',
      request: {
        replan: [
          "task 1 (A) names `README.md`, outside this story's perimeter",
          "task 3 (C) names `.github/epicflow.yml`, outside this story's perimeter",
          'task 1 (A) says it satisfies 3, but the story has 2 acceptance lines',
          'acceptance line 2 is satisfied by no task: two',
        ],
      },
    });
    if (first.next !== 'ask') throw new Error('expected a re-plan');
    const second = decide(
      first.state,
      json([
        { title: 'A', outcome: 'a', paths: ['src/s/a.ts'], satisfies: [1, 2] },
        { title: 'B', outcome: 'b', paths: ['src/o/b.ts'] },
      ]),
    );
    expect(second).toMatchObject({
      next: 'run',
      notes: ['task 2 (B) dropped: it names `src/o/b.ts` of story o'],
    });
    expect(decide(first.state, json([{ title: 'A', outcome: 'a', paths: ['x'] }]))).toMatchObject({
      next: 'without',
      note: expect.stringMatching(/^the re-planned task list still/),
    });
  });

  it('more than MAX_TASKS tasks is not a task list: a repair turn', () => {
    const many = Array.from({ length: MAX_TASKS + 1 }, (_, i) => ({
      title: `T${i}`,
      outcome: 'done',
      paths: ['src/s'],
      satisfies: [1, 2],
    }));
    expect(decide(fresh, json(many))).toMatchObject({
      next: 'ask',
      request: { repair: expect.stringContaining('tasks: Too big') },
    });
  });

  it('a planning turn that stopped: no tasks', () => {
    const start = startTaskPlanning();
    if (start.next !== 'ask') throw new Error('expected a turn');
    expect(
      decideAfterPlanTurn(start.state, { kind: 'stopped', detail: 'failed: exit 1' }, s, plan, []),
    ).toEqual({
      next: 'without',
      note: 'the task plan turn ended without a task list (failed: exit 1): the story runs without tasks',
    });
  });
});

const task = (title: string, done = false, extra: Partial<StoryTask> = {}): StoryTask => ({
  title,
  outcome: `${title} works`,
  paths: [],
  satisfies: [],
  done,
  ...extra,
});
const C1 = '1'.repeat(40);
const C2 = '2'.repeat(40);

describe('the checkpoint of a task plan', () => {
  it('a ticked task keeps its commit and findings; the next prompt shows them', () => {
    const ticked = tickTask([task('A'), task('B')], 0, C1, 'use makeA');
    expect(ticked[0]).toEqual({ ...task('A', true), commit: C1, findings: 'use makeA' });
    const section = taskSection(ticked, 1).join('\n\n');
    expect(section).toContain('## Your task now: task 2 of 2');
    expect(section).toContain('1. [x] A\n2. [>] B');
    expect(section).toContain('## Findings of the task before\n\n> use makeA');
  });

  it('resumes with the turn of a task that committed nothing since the last tick, else as the story would', () => {
    const tasks = [task('A', true, { commit: C1 }), task('B')];
    const check = { kind: 'check' } as const;
    expect(taskResumePoint(check, { commit: C1, passed: 'checks' }, tasks, 1)).toEqual({
      kind: 'code',
    });
    expect(taskResumePoint(check, { commit: C2, passed: 'none' }, tasks, 1)).toEqual(check);
    expect(taskResumePoint(check, { commit: C2, passed: 'none' }, [task('A')], 0)).toEqual(check);
  });

  it('reads the Findings section at the end of a reply', () => {
    expect(parseFindings('Done.\n\n## Findings\nuse makeA\nkeep b small\n')).toBe(
      'use makeA\nkeep b small',
    );
    expect(parseFindings('Findings:\nx')).toBe('x');
    expect(parseFindings('Done, no findings here.')).toBeUndefined();
    expect(parseFindings(`## Findings\n${'x'.repeat(3000)}`)?.length).toBe(2001);
  });
});

const alpha: ExecutorConfig = {
  id: 'alpha',
  harness: 'command',
  args: [],
  slots: 1,
  priority: 100,
  roles: ['coder'],
  env: {},
};
const rules: RoundRules = {
  fixRounds: 2,
  judgeRounds: 2,
  verifier: false,
  retries: { transient: 3, backoffMs: 2000 },
  taskEnd: true,
};
const okTurn = { interrupted: false, outcome: 'ok' as const, missingBinary: false, detail: '' };

describe('the rounds of a task that is not the last', () => {
  it('end at a commit that passed the checks, before any judge', () => {
    const turn = decideAfterTurn(startRounds(rules, alpha, ['alpha']).state, okTurn);
    const checked = decideAfterCheck(turn.state, {
      interrupted: false,
      empty: false,
      verdicts: [],
      oracle: [],
      perimeter: { owned: ['src/s/a.ts'], readOnly: [], outside: [], forbidden: [] },
      runs: [],
      commit: C1,
    });
    expect(checked.next).toEqual({ kind: 'task-done', commit: C1 });
    expect(checked.effects).toContainEqual({
      kind: 'progress',
      progress: { commit: C1, passed: 'checks' },
    });
  });

  it('a turn that changed nothing completes the task; in the last task it is checked', () => {
    const start = startRounds(rules, alpha, ['alpha']);
    expect(decideAfterTurn(start.state, { ...okTurn, unchanged: true }).next).toEqual({
      kind: 'task-done',
      commit: undefined,
    });
    const last = startRounds({ ...rules, taskEnd: false }, alpha, ['alpha']);
    expect(decideAfterTurn(last.state, { ...okTurn, unchanged: true }).next).toEqual({
      kind: 'check',
    });
  });
});
