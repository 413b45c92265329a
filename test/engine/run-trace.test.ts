/**
 * What a run tells about itself: the wait for the merge lock as events, the executor on
 * every story event, a run-ended line and the index of runs (`runs.json`), and
 * `epicflow logs --follow` tailing a turn while it runs.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Git } from '../../src/adapters/git/index.js';
import { gitPort } from '../../src/adapters/git/port.js';
import { shellGates } from '../../src/adapters/process/shell-gates.js';
import { FileStateStore } from '../../src/adapters/state/file-store.js';
import { main } from '../../src/cli/program.js';
import { DEFAULT_CONFIG } from '../../src/core/config/schema.js';
import type { Plan, Story } from '../../src/core/model.js';
import { integrate } from '../../src/engine/integrate.js';
import type { EngineEvent } from '../../src/engine/ports.js';
import { openEpic } from '../../src/engine/run-epic.js';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** Waits until `check` holds (no time limit of its own: the test's timeout is the guard). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await delay(20);
}

function withCoder(script: Parameters<typeof scriptedCoder>[2]): void {
  const coder = scriptedCoder(repo, 'coder', script);
  repo.write(
    'epicflow.yml',
    configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
  );
  repo.commit('config');
}

describe('the merge lock', () => {
  const story: Story = {
    id: 's',
    title: 'Story s',
    description: 'x',
    owns: ['own.txt'],
    reads: [],
    dependsOn: [],
    provides: [],
    acceptance: [],
    testsChange: false,
  };
  const plan: Plan = { stories: [story], waves: [['s']], hashes: { s: 'h' } };

  it('a story that finds it held says it waits, and how long it waited once it has it', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const events: EngineEvent[] = [];
    const ctx = await openEpic(
      {
        epic: 'e',
        epicBranch: 'epic/e',
        plan,
        config: { ...DEFAULT_CONFIG, gates: ['true'] },
        configPaths: [],
        answerKey: new Uint8Array(32),
        worktreesDir: join(repo.tmp, 'trees'),
        homesDir: join(repo.tmp, 'homes'),
        executorEnv: {},
      },
      {
        git: gitPort(await Git.open(repo.dir)),
        state: new FileStateStore(join(repo.tmp, 'state')),
        gates: shellGates(process.env),
        executors: () => {
          throw new Error('no executor in this test');
        },
        clock: { now: () => new Date(), sleep: async () => undefined },
        events: { emit: (e) => events.push(e) },
      },
    );
    git(repo.dir, 'branch', 'story/e/s', 'epic/e');
    const tree = join(repo.tmp, 'story');
    git(repo.dir, 'worktree', 'add', '-q', tree, 'story/e/s');
    writeFileSync(join(tree, 'own.txt'), 'mine\n');
    git(tree, 'add', '-A');
    git(tree, 'commit', '-qm', 'story');
    const commit = git(tree, 'rev-parse', 'HEAD');

    let release: (() => void) | undefined;
    const holding = ctx.merge.run(
      () => new Promise<void>((resolve) => (release = resolve)),
      'merging other',
    );
    await until(() => release !== undefined);
    const merging = integrate(ctx, { story, branch: 'story/e/s', commit, chain: ['bot'] });
    const waits = (): EngineEvent[] => events.filter((e) => e.data?.['wait'] === 'merge lock');
    expect(waits()).toEqual([
      expect.objectContaining({
        kind: 'story',
        story: 's',
        message: 'waiting for the merge lock (held for merging other)',
        data: { wait: 'merge lock', heldFor: 'merging other' },
      }),
    ]);
    release?.();
    await holding;
    const merged = await merging;
    expect(git(repo.dir, 'rev-parse', 'epic/e')).toBe(merged);
    expect(waits()).toHaveLength(2);
    expect(waits()[1]).toMatchObject({
      story: 's',
      message: expect.stringMatching(/^took the merge lock after \d+s$/),
      data: { wait: 'merge lock', waitMs: expect.any(Number) },
    });

    // A free lock is taken without a word.
    events.length = 0;
    git(tree, 'merge', '-q', 'epic/e');
    writeFileSync(join(tree, 'own.txt'), 'again\n');
    git(tree, 'commit', '-qam', 'again');
    await integrate(ctx, {
      story,
      branch: 'story/e/s',
      commit: git(tree, 'rev-parse', 'HEAD'),
      chain: ['bot'],
    });
    expect(waits()).toEqual([]);
  });
});

describe('a run says what it was', () => {
  it('every story event names its executor; a run-ended line; runs.json lists each run', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withCoder({ a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
    const first = await run(repo, plan);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      'epicflow: run ended (run-1): 1 done, 0 failed, 0 waiting · exit 0\n',
    );
    expect(first.stdout).toContain(`runs:        ${join(stateDir(repo), 'runs.json')}\n`);
    const events = readFileSync(join(stateDir(repo), 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as EngineEvent);
    const ofStory = events.filter((e) => e.story === 'a');
    expect(ofStory.length).toBeGreaterThan(3);
    expect(ofStory.filter((e) => e.executor !== 'bot')).toEqual([]);
    expect(events.filter((e) => e.story === undefined && e.executor !== undefined)).toEqual([]);
    expect(events.at(-1)).toMatchObject({
      kind: 'epic',
      data: { runEnded: 'run-1', outcome: 'finished' },
    });

    // A second run: merged already, it is the index's second entry.
    expect((await run(repo, plan)).code).toBe(0);
    const index = JSON.parse(readFileSync(join(stateDir(repo), 'runs.json'), 'utf8')) as {
      runs: Record<string, unknown>[];
    };
    expect(index.runs).toEqual([
      {
        id: 'run-1',
        startedAt: expect.any(String),
        endedAt: expect.any(String),
        outcome: 'finished',
        summary: '1 done, 0 failed, 0 waiting',
      },
      {
        id: 'run-2',
        startedAt: expect.any(String),
        endedAt: expect.any(String),
        outcome: 'finished',
        summary: '1 done, 0 failed, 0 waiting',
      },
    ]);
    for (const r of index.runs) {
      expect(Date.parse(r['endedAt'] as string)).toBeGreaterThanOrEqual(
        Date.parse(r['startedAt'] as string),
      );
    }
  });
});

describe('epicflow logs --follow', () => {
  it('prints what the running turn prints, as it comes, until the run ends', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const go = join(repo.tmp, 'go');
    withCoder({
      a: {
        '*': {
          write: { 'src/a.txt': 'a\n' },
          sh: [
            `echo hello from the coder; while [ ! -f '${go}' ]; do sleep 0.05; done; echo done now`,
          ],
        },
      },
    });
    const running = run(repo, planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]));
    const live = join(stateDir(repo), 'logs', 'a', 'live.log');
    await until(() => existsSync(live) && readFileSync(live, 'utf8').includes('hello from'));

    let out = '';
    const following = main(['logs', 'a', '--follow', '--repo', repo.dir], {
      stdout: (s) => (out += s),
      stderr: (s) => (out += s),
      readStdin: async () => '',
      cwd: repo.tmp,
    });
    await until(() => out.includes('hello from the coder\n'));
    expect(out).not.toContain('done now');
    writeFileSync(go, '');
    expect((await running).code).toBe(0);
    expect(await following).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toBe(
      'epicflow: following story a of epic epic until the run ends (Ctrl-C stops following, not the run)',
    );
    expect(lines).toContain('==> attempt 1: coder <==');
    expect(lines.indexOf('done now')).toBeGreaterThan(lines.indexOf('hello from the coder'));
    expect(lines.at(-2)).toBe(
      'epicflow: the run of epic epic ended; epicflow logs a prints its logs',
    );

    // With no run going it says so and prints the last logs.
    let after = '';
    const code = await main(['logs', 'a', '--follow', '--repo', repo.dir], {
      stdout: (s) => (after += s),
      stderr: (s) => (after += s),
      readStdin: async () => '',
      cwd: repo.tmp,
    });
    expect(code).toBe(0);
    expect(after).toMatch(/^epicflow: no run of epic epic is active; the story's last logs:\n==> /);
    expect(after).toContain('hello from the coder');

    let unknown = '';
    expect(
      await main(['logs', 'zz', '--follow', '--repo', repo.dir], {
        stdout: (s) => (unknown += s),
        stderr: (s) => (unknown += s),
        readStdin: async () => '',
        cwd: repo.tmp,
      }),
    ).toBe(2);
    expect(unknown).toBe('error: story "zz" is not in the plan of epic "epic"\n  its stories: a\n');
  });
});
