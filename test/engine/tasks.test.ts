/**
 * A story run as a task plan (`tasks: true`), through `epicflow run` with a scripted
 * coder: planning, one turn per task with the gates after it, findings carried, the
 * plan's checks (perimeter, other stories, coverage, bad JSON), and a resume at the
 * first unchecked task.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  configYaml,
  copyLink,
  copyRepo,
  epicMerges,
  makeRepo,
  record,
  reportJson,
  run,
  showFile,
  type CopyLink,
  type TestRepo,
} from './support/repo.js';
import { bundledEntry } from '../support/bundled-entry.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..');
// The crash child bundled once for the whole run (test/support/bundled-entry.ts): started
// with `--import tsx` it would transpile the sources again at each start.
let crashChild: string;
beforeAll(async () => {
  crashChild = await bundledEntry(join(here, 'support', 'crash-child.ts'));
});
const TASK_CODER = join(here, 'support', 'task-coder.mjs');

let repo: TestRepo;
// A crashed story a describe shares is removed after all its tests.
let shared: TestRepo | undefined;
afterEach(() => {
  if (repo !== shared) repo?.cleanup();
});

interface Entry {
  id: string;
  owns: string[];
  acceptance?: string[];
  tasks?: boolean;
}

function plan(stories: Entry[]): string {
  const yaml = stories
    .map((s) =>
      [
        `  - id: ${s.id}`,
        `    title: Story ${s.id}`,
        `    description: Build ${s.id}.`,
        `    owns: ${JSON.stringify(s.owns)}`,
        ...(s.acceptance ? [`    acceptance: ${JSON.stringify(s.acceptance)}`] : []),
        ...(s.tasks === undefined ? [] : [`    tasks: ${s.tasks}`]),
      ].join('\n'),
    )
    .join('\n');
  return `# Tasks\n\n\`\`\`epicflow\nstories:\n${yaml}\n\`\`\`\n`;
}

interface TaskScript {
  plan: string[];
  task?: Record<string, { write?: Record<string, string>; stdout?: string }>;
  plain?: { write?: Record<string, string>; stdout?: string };
}

type Task = { title: string; outcome: string; paths: string[]; satisfies?: number[] };

/** A task list as a coder answers it. */
function answer(tasks: Task[]): string {
  return `Here is my plan.\n\n\`\`\`json\n${JSON.stringify({ tasks })}\n\`\`\`\n`;
}

const THREE: Task[] = [
  { title: 'Write a', outcome: 'src/a.txt holds a', paths: ['src/a.txt'], satisfies: [1] },
  { title: 'Write b', outcome: 'src/b.txt holds b', paths: ['src/b.txt'], satisfies: [2] },
  { title: 'Write c', outcome: 'src/c.txt holds c', paths: ['src/c.txt'], satisfies: [3] },
];
const ACCEPTANCE = ['a is there', 'b is there', 'c is there'];

/** A repository whose config names the task coder with `script`; `extra` lines of config. */
function setUp(
  script: TaskScript,
  opts: { gates?: string[]; extra?: string; link?: CopyLink } = {},
): void {
  repo = makeRepo({ 'README.md': 'original\n' });
  const path = join(repo.tmp, 'tasks.json');
  writeFileSync(path, JSON.stringify(script));
  const coder = ['node', TASK_CODER, path, join(repo.tmp, 'coder.log')];
  opts.link?.use(repo);
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [{ id: 'bot', command: opts.link?.through(repo, coder) ?? coder }],
      gates: opts.gates ?? ['test -f README.md'],
      ...(opts.extra === undefined ? {} : { extra: opts.extra }),
    }),
  );
  repo.commit('config');
}

/** The task coder's turns, in order: it logs each as a line of JSON (task-coder.mjs). */
function coderTurns(): { story: string; round: string; prompt: string }[] {
  const log = join(repo.tmp, 'coder.log');
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { story: string; round: string; prompt: string });
}

const turns = (): string[] => coderTurns().map((p) => p.prompt);

const writes = (path: string, text: string, findings?: string) => ({
  write: { [path]: text },
  ...(findings === undefined ? {} : { stdout: `Done.\n\n## Findings\n${findings}\n` }),
});

describe('a story run as a task plan', () => {
  it('plans, then runs each task as its own turn with the gates after it, carrying its findings', async () => {
    setUp(
      {
        plan: [answer(THREE)],
        task: {
          '1': writes('src/a.txt', 'a\n', 'the helper is called makeA'),
          // Task 2 first writes what the gate refuses: its fix round comes before task 3.
          '2': writes('src/b.txt', 'bad\n'),
          '2-fix': writes('src/b.txt', 'b\n', 'b needed a second try'),
          '3': writes('src/c.txt', 'c\n'),
        },
      },
      { gates: ['! grep -qx bad src/b.txt 2>/dev/null'] },
    );
    const story: Entry = { id: 's', owns: ['src'], acceptance: ACCEPTANCE, tasks: true };
    const r = await run(repo, plan([story]));
    expect(r.code).toBe(0);
    const p = turns();
    expect(p).toHaveLength(5);
    expect(p[0]).toContain('## First, plan this story as tasks');
    expect(p[0]).toContain('1. a is there\n2. b is there\n3. c is there');
    expect(p[1]).toContain('## Your task now: task 1 of 3');
    expect(p[1]).toContain('Done when: src/a.txt holds a');
    expect(p[2]).toContain('## Your task now: task 2 of 3');
    expect(p[2]).toContain('## Findings of the task before\n\n> the helper is called makeA');
    expect(p[2]).toContain('1. [x] Write a (Satisfies: 1)\n2. [>] Write b (Satisfies: 2)');
    expect(p[3]).toContain('## Your task now: task 2 of 3');
    expect(p[3]).toContain('## The gates failed');
    expect(p[4]).toContain('## Your task now: task 3 of 3');
    expect(p[4]).toContain('> b needed a second try');
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    for (const x of ['a', 'b', 'c']) expect(showFile(repo, 'epic/epic', `src/${x}.txt`)).toBe(x);
    expect(record(repo, 's')).toMatchObject({ status: 'done' });
    expect(record(repo, 's')).not.toHaveProperty('tasks');
    expect(r.stdout).toContain('task 1 of 3 done: Write a');
    expect(r.stdout).toContain('task 2 of 3 done: Write b');
  });

  it('a task whose turn changes nothing is completed, not failed', async () => {
    // Two tasks: the first changes nothing, the one after it still runs.
    const two: Task[] = [
      { ...THREE[1]!, satisfies: [1] },
      { ...THREE[2]!, satisfies: [2] },
    ];
    setUp({ plan: [answer(two)], task: { '2': writes('src/c.txt', 'c\n') } });
    const story: Entry = {
      id: 's',
      owns: ['src'],
      acceptance: ACCEPTANCE.slice(1),
      tasks: true,
    };
    const r = await run(repo, plan([story]));
    expect(r.code).toBe(0);
    expect(turns()).toHaveLength(3);
    expect(r.stdout).toContain('the task changed nothing: completed');
    expect(r.stdout).toContain('task 1 of 2 done: Write b');
    expect(record(repo, 's')).toMatchObject({ status: 'done' });
    expect(showFile(repo, 'epic/epic', 'src/c.txt')).toBe('c');
    expect(showFile(repo, 'epic/epic', 'src/b.txt')).toBeNull();
  });

  describe('crashed after its first task', () => {
    /**
     * The story killed once its first task is ticked, made once for the two tests that run
     * it again: each in a copy (`copyRepo`), its coder named through `link`.
     */
    const link = copyLink();
    afterAll(() => {
      shared?.cleanup();
      link.cleanup();
    });
    const TEXT = plan([{ id: 's', owns: ['src'], acceptance: ACCEPTANCE }]);

    beforeAll(() => {
      setUp(
        {
          plan: [answer(THREE)],
          task: {
            '1': writes('src/a.txt', 'a\n', 'a is done'),
            '2': writes('src/b.txt', 'b\n'),
            '3': writes('src/c.txt', 'c\n'),
          },
        },
        { extra: 'tasks: true', link },
      );
      shared = repo;
      const file = join(repo.tmp, 'epic.md');
      writeFileSync(file, TEXT);
      const killed = spawnSync(process.execPath, [crashChild, file, repo.dir], {
        cwd: projectRoot,
        env: { ...process.env, EPICFLOW_TEST_CRASH_AT: 'after-task:s' },
        encoding: 'utf8',
      });
      expect(killed.signal).toBe('SIGKILL');
      expect(turns()).toHaveLength(2);
      const ticked = record(repo, 's').tasks as { done: boolean }[];
      expect(ticked.map((t) => t.done)).toEqual([true, false, false]);
    });

    /** `repo` a copy of the crashed story, its coder logging there. */
    function copyCrashed(): void {
      if (shared === undefined) throw new Error('the crashed story was not made');
      repo = copyRepo(shared);
      link.use(repo);
    }

    it('resumes at the first unchecked task, on its commits, without running a ticked task again', async () => {
      copyCrashed();
      const r = await run(repo, TEXT);
      expect(r.code).toBe(0);
      const p = turns();
      // The plan and task 1 before the crash; tasks 2 and 3 after it: nothing ran twice.
      expect(p).toHaveLength(4);
      expect(p[2]).toContain('## Your task now: task 2 of 3');
      expect(p[2]).toContain('> a is done');
      expect(p[3]).toContain('## Your task now: task 3 of 3');
      expect(p.filter((t) => t.includes('task 1 of 3'))).toHaveLength(1);
      expect(r.stdout).toContain('resuming at task 2 of 3');
      for (const x of ['a', 'b', 'c']) expect(showFile(repo, 'epic/epic', `src/${x}.txt`)).toBe(x);
      expect(record(repo, 's')).toMatchObject({ status: 'done', attempt: 1 });
    });

    it('a changed plan entry starts over, with a new task plan', async () => {
      copyCrashed();
      const changed = plan([
        { id: 's', owns: ['src'], acceptance: [...ACCEPTANCE.slice(0, 2), 'c is there, too'] },
      ]);
      const r = await run(repo, changed);
      expect(r.code).toBe(0);
      const p = turns();
      expect(p).toHaveLength(6);
      expect(p[2]).toContain('## First, plan this story as tasks');
      expect(p[3]).toContain('## Your task now: task 1 of 3');
      expect(r.stdout).toContain('plan entry changed since its branch was created');
    });
  });
});

describe('the task list is checked before it runs', () => {
  // One task each way: the re-plan is what is checked, not how many tasks then run (three
  // tasks run one after another above).
  it('a task naming paths outside the perimeter gets one re-plan', async () => {
    const outside: Task[] = [{ ...THREE[0]!, paths: ['src/a.txt', 'docs/a.md'] }];
    setUp({
      plan: [answer(outside), answer([THREE[0]!])],
      task: { '1': writes('src/a.txt', 'a\n') },
    });
    const story: Entry = { id: 's', owns: ['src'], acceptance: ['a is there'], tasks: true };
    const r = await run(repo, plan([story]));
    expect(r.code).toBe(0);
    const p = turns();
    expect(p).toHaveLength(3);
    expect(p[1]).toContain('## Plan again');
    expect(p[1]).toContain("task 1 (Write a) names `docs/a.md`, outside this story's perimeter");
    expect(p[2]).toContain('## Your task now: task 1 of 1');
    expect(record(repo, 's')).toMatchObject({ status: 'done' });
  });

  it('a re-planned list that still does not fit: the story runs without tasks, and says so', async () => {
    const outside: Task[] = [{ ...THREE[0]!, paths: ['docs/a.md'] }, ...THREE.slice(1)];
    setUp({
      plan: [answer(outside)],
      plain: { write: { 'src/a.txt': 'a\n' } },
    });
    const story: Entry = { id: 's', owns: ['src'], acceptance: ACCEPTANCE, tasks: true };
    const r = await run(repo, plan([story]));
    expect(r.code).toBe(0);
    const p = turns();
    expect(p).toHaveLength(3);
    expect(p[2]).not.toContain('## Your task now');
    const note = reportJson(repo).stories[0]?.notes.find((n) => n.includes('without tasks'));
    expect(note).toMatch(/^the re-planned task list still does not fit \(.*docs\/a\.md/);
  });

  it("a task naming another story's paths is dropped with a note, without a re-plan", async () => {
    const tasks: Task[] = [
      { title: 'Write a', outcome: 'a', paths: ['src/a.txt'], satisfies: [1] },
      { title: 'Touch b', outcome: 'b', paths: ['lib/b.txt'] },
    ];
    setUp(
      {
        plan: [answer(tasks)],
        task: { '1': writes('src/a.txt', 'a\n') },
        plain: { write: { 'lib/b.txt': 'b\n' } },
      },
      { extra: 'tasks: true' },
    );
    const r = await run(
      repo,
      plan([
        { id: 's', owns: ['src'], acceptance: ['a is there'] },
        // A story's own `tasks: false` overrides the config.
        { id: 'o', owns: ['lib'], tasks: false },
      ]),
    );
    expect(r.code).toBe(0);
    const ofS = coderTurns().filter((t) => t.story === 's');
    expect(ofS).toHaveLength(2);
    expect(ofS[1]?.prompt).toContain('## Your task now: task 1 of 1');
    expect(ofS.some((t) => t.prompt.includes('## Plan again'))).toBe(false);
    const ofO = coderTurns().filter((t) => t.story === 'o');
    expect(ofO).toHaveLength(1);
    expect(ofO[0]?.prompt).not.toContain('plan this story as tasks');
    const notes = reportJson(repo).stories.find((s) => s.id === 's')?.notes;
    expect(notes).toContain('task 2 (Touch b) dropped: it names `lib/b.txt` of story o');
  });

  it('an acceptance line no task satisfies: the re-plan asks for it', async () => {
    const both: Task = {
      title: 'Write a and b',
      outcome: 'src/a.txt holds a, src/b.txt b',
      paths: ['src/a.txt', 'src/b.txt'],
      satisfies: [1, 2],
    };
    setUp({
      plan: [answer([THREE[0]!]), answer([both])],
      task: { '1': { write: { 'src/a.txt': 'a\n', 'src/b.txt': 'b\n' } } },
    });
    const story: Entry = {
      id: 's',
      owns: ['src'],
      acceptance: ACCEPTANCE.slice(0, 2),
      tasks: true,
    };
    const r = await run(repo, plan([story]));
    expect(r.code).toBe(0);
    const p = turns();
    expect(p[1]).toContain('## Plan again');
    expect(p[1]).toContain('acceptance line 2 is satisfied by no task: b is there');
    expect(p[2]).toContain('## Your task now: task 1 of 1');
    expect(p).toHaveLength(3);
  });

  it('a task list that is not valid JSON gets one repair turn, then the story runs without tasks and says so', async () => {
    setUp({
      plan: ['Sure! {tasks: [write a]}', 'Here: {"tasks": [ {"title": "Write a",'],
      plain: { write: { 'src/a.txt': 'a\n' } },
    });
    const story: Entry = { id: 's', owns: ['src'], acceptance: ['a is there'], tasks: true };
    const r = await run(repo, plan([story]));
    expect(r.code).toBe(0);
    const p = turns();
    expect(p).toHaveLength(3);
    expect(p[1]).toContain('## Your last answer was not a task list');
    expect(p[1]).toContain('not valid JSON');
    expect(p[2]).not.toContain('## Your task now');
    expect(p[2]).not.toContain('plan this story as tasks');
    expect(showFile(repo, 'epic/epic', 'src/a.txt')).toBe('a');
    const notes = reportJson(repo).stories[0]?.notes ?? [];
    expect(notes.some((n) => /^the task list was not valid after one repair turn \(/.test(n))).toBe(
      true,
    );
    expect(notes.find((n) => n.startsWith('the task list'))).toMatch(
      /the story runs without tasks$/,
    );
    expect(r.stdout).toContain('warning: the task list was not valid after one repair turn');
  });
});
