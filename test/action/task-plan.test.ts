/**
 * A story run as a task plan in a story job: the job is killed during task 2 of 3, after
 * task 1 was ticked; the tick reached the story's record on GitHub with the branch, and
 * `/resume` continues at task 2, without paying for task 1 again. The kill is the bundle's
 * (a killed process is the shell's and the runner's); the orchestrator's decisions after it
 * and the next attempt's story jobs run in-process (test/orchestrator/support/story-jobs.ts).
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { storyJobs } from '../orchestrator/support/story-jobs.js';
import { agentScript } from './support/agents.js';
import { commentInProcess, runEndedInProcess } from './support/epic.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  dispatched,
  planBody,
  runJob,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
} from './support/world.js';

let bundleDir: string;
let bundle: string;
let w: ActionWorld;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
  w = await startWorld({
    config: (dumps) =>
      [
        'executors:',
        '  - id: scripted',
        '    harness: command',
        `    command: ${JSON.stringify(['node', agentScript('tasks-coder.mjs'), dumps])}`,
        'gates: ["sh check.sh"]',
        'fixRounds: 0',
        'tasks: true',
        '',
      ].join('\n'),
  });
});
afterAll(async () => {
  await w.close();
  await rm(bundleDir, { recursive: true, force: true });
});

/** The prompts of story `id`'s coder turns over all jobs, in order. */
function turns(id: string): string[] {
  return readdirSync(w.dumps)
    .filter((f) => f.startsWith(`turn-${id}-`))
    .sort()
    .map((f) => readFileSync(join(w.dumps, f), 'utf8'));
}

async function waitForFile(path: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(path); i++) await sleep(50);
  if (!existsSync(path)) throw new Error(`${path} never appeared`);
}

describe('a story job run as a task plan', () => {
  it('killed during task 2 of 3, /resume continues at task 2 on the pushed commits: task 1 runs once', async () => {
    const epic = await startEpic(w, planBody([{ id: 'tasked' }]));
    const { runId } = dispatchOf(w, epic, 'tasked');
    w.gh.act.startWorkflowRun(runId);
    await w.gh.idle();

    const held = join(w.dumps, 'tasked-task2-held');
    const killed = await runJob(w, bundle, {
      name: 'tasked-1',
      workspace: await checkout(w, 'tasked-1'),
      inputs: storyInputs(w, epic, 'tasked'),
      runId,
      onSpawn: (child) => {
        void waitForFile(held).then(() => child.kill('SIGKILL'));
      },
    });
    try {
      process.kill(Number(await readFile(held, 'utf8')), 'SIGKILL');
    } catch {
      // Already gone.
    }
    expect(killed.code).toBeNull();
    // The plan, task 1, and task 2 that was cut short.
    expect(turns('tasked')).toHaveLength(3);
    // Task 1's tick reached the story's record on GitHub, with its commit on the branch.
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const record = (await store.read('tasked'))?.record;
    expect(record?.tasks?.map((t) => t.done)).toEqual([true, false, false]);
    const branchHead = await w.gh.state.ref(OWNER, REPO, `story/${epic}/tasked`);
    expect(record?.tasks?.[0]?.commit).toBe(branchHead);
    expect(await w.gh.state.file(OWNER, REPO, `story/${epic}/tasked`, 'src/tasked/task-1.js')).toBe(
      'export const part = 1;\n',
    );

    // The runner reports the run as failed, and alice comments /resume: the orchestrator's
    // decisions, in-process (orchestrate mode's own runs are epic-appless.test.ts's).
    await runEndedInProcess(w, runId, 'failure');
    await commentInProcess(w, 'alice', epic, '/resume');
    expect(dispatched(w, epic)).toEqual(['tasked#1', 'tasked#2']);
    // The next attempt's jobs in-process: what only the bundle shows is the kill.
    const { work, publish } = await storyJobs(w, epic, 'tasked', { attempt: 2 });
    expect(work.record.status).toBe('done');
    expect(publish.record.status).toBe('done');

    const all = turns('tasked');
    // The second job's first turn is task 2, with task 1's findings; task 1 ran once.
    expect(all).toHaveLength(5);
    expect(all[3]).toContain('## Your task now: task 2 of 3');
    expect(all[3]).toContain('> part 1 is in place');
    expect(all[4]).toContain('## Your task now: task 3 of 3');
    expect(all.filter((p) => p.includes('## Your task now: task 1 of 3'))).toHaveLength(1);
    expect(all.filter((p) => p.includes('## First, plan this story as tasks'))).toHaveLength(1);
    for (const k of [1, 2, 3]) {
      expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, `src/tasked/task-${k}.js`)).toBe(
        `export const part = ${k};\n`,
      );
    }
    expect((await store.read('tasked'))?.record).toMatchObject({ status: 'done', attempt: 2 });
  }, 540_000);
});
