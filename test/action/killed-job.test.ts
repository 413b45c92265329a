/**
 * A story's work job killed mid-way (the job cancelled hard): the bundle gets SIGKILL
 * during the coder turn, so it hands nothing over, or during the gates, after the coder's
 * work was committed and handed over. The publish job, which runs whatever became of the
 * work job, records what it got; `/resume` runs the story again and it is merged exactly
 * once, without paying again for a turn whose work was committed. A killed job is the
 * shell's and the runner's: it needs the bundle; the orchestrator's decisions after it (the
 * failed run, `/resume`) are called in-process, and the second test's next attempt is its
 * story jobs in-process (test/orchestrator/support/story-jobs.ts). What the engine decides within a job (a
 * crashed coder retried, a silent one stopped, claims checked) is tested in
 * test/engine/transient.test.ts, stall.test.ts and claims.test.ts.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { storyJobs } from '../orchestrator/support/story-jobs.js';
import { agentScript } from './support/agents.js';
import { commentInProcess, runEndedInProcess, sixStoryConfig } from './support/epic.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  dispatched,
  epicMergeTrailers,
  planBody,
  runJob,
  startEpic,
  startJobProcessesFromNode,
  startWorld,
  storyInputs,
  type ActionWorld,
} from './support/world.js';

// A killed job's processes are left as a runner leaves them: started from the job's own Node
// process, which the kill takes away.
startJobProcessesFromNode();

let bundleDir: string;
let bundle: string;
let w: ActionWorld;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
  w = await startWorld({
    // The six-story roster without its board (none is seeded here), and a gate that
    // holds the first gate run on story "late".
    config: (dumps) =>
      sixStoryConfig(dumps)
        .replace(/^board:.*\n/m, '')
        .replace(
          /^gates: .*$/m,
          `gates: ${JSON.stringify(['sh check.sh', `node ${agentScript('hold-gate.mjs')} ${dumps}`])}`,
        ),
  });
});
afterAll(async () => {
  await w.close();
  await rm(bundleDir, { recursive: true, force: true });
});

/** The coder turns story `id` was paid for, over all jobs. */
function turns(id: string): number {
  return readdirSync(w.dumps).filter((f) => f.startsWith(`turn-${id}-`)).length;
}

/**
 * Story `id` of a new epic, its first job started, and sent `signal` once the coder (or a
 * gate) writes `marker` into the dumps: the job as it ended, and the epic and run.
 */
async function signalledJob(
  id: string,
  marker: string,
  signal: NodeJS.Signals,
  env?: Record<string, string>,
): Promise<{ epic: number; runId: number; job: Awaited<ReturnType<typeof runJob>> }> {
  const epic = await startEpic(w, planBody([{ id }]));
  expect(dispatched(w, epic)).toEqual([`${id}#1`]);
  const { runId } = dispatchOf(w, epic, id);
  w.gh.act.startWorkflowRun(runId);
  await w.gh.idle();
  const file = join(w.dumps, marker);
  const job = await runJob(w, bundle, {
    name: `${id}-1`,
    workspace: await checkout(w, `${id}-1`),
    inputs: storyInputs(w, epic, id),
    runId,
    ...(env === undefined ? {} : { env }),
    onSpawn: (child) => {
      void waitForFile(file).then(() => child.kill(signal));
    },
  });
  return { epic, runId, job };
}

/**
 * The run ends as `conclusion`, `/resume` dispatches attempt 2, whose jobs are a story's like
 * any other (in-process here: what a killed process leaves behind is the bundle's; the rest
 * is the same code), and the story is done, `paid` coder turns in all.
 */
async function resumedOnce(
  epic: number,
  id: string,
  runId: number,
  conclusion: 'failure' | 'cancelled',
  paid: number,
): Promise<void> {
  await runEndedInProcess(w, runId, conclusion);
  await commentInProcess(w, 'alice', epic, '/resume');
  expect(dispatched(w, epic)).toEqual([`${id}#1`, `${id}#2`]);
  const { work, publish } = await storyJobs(w, epic, id, { attempt: 2 });
  expect(work.record.status).toBe('done');
  expect(publish.record.status).toBe('done');
  expect(turns(id)).toBe(paid);
}

/** Waits for a file the coder writes (bounded: the coder writes it within seconds). */
async function waitForFile(path: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(path); i++) await sleep(50);
  if (!existsSync(path)) throw new Error(`${path} never appeared`);
}

describe('a story job killed during the coder turn', () => {
  it('records a failure when the run ends, and /resume merges the story exactly once', async () => {
    const { epic, runId, job: killed } = await signalledJob('slow', 'slow-started', 'SIGKILL');
    const started = join(w.dumps, 'slow-started');
    // The coder was left behind by its killed parent; end it too, by its pid.
    try {
      process.kill(Number(await readFile(started, 'utf8')), 'SIGKILL');
    } catch {
      // Already gone.
    }
    // The work job died before it handed anything over; its publish job (which runs
    // whatever became of the work job) finds no result and fails the story, saying why.
    expect(killed.work?.code).toBeNull();
    expect(killed.publish?.code).toBe(1);
    const epicHead = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const failed = {
      status: 'failed',
      reason: expect.stringContaining(
        'the work job was cancelled before it handed its result over',
      ) as unknown,
    };
    expect((await store.read('slow'))?.record).toMatchObject(failed);
    const reason = (await store.read('slow'))?.record.reason ?? '';
    expect(reason).toContain("the publish job refused the work job's result");
    expect(reason).toContain('result record is missing');
    expect(killed.publish?.summary).toContain('result record is missing');
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/slow`)).toBeUndefined();
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/slow/index.js')).toBeUndefined();

    // The runner reports the run as failed; the orchestrator leaves the reason as it is.
    await runEndedInProcess(w, runId, 'failure');
    expect((await store.read('slow'))?.record).toMatchObject(failed);
    expect(await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(epicHead);

    await commentInProcess(w, 'alice', epic, '/resume');
    expect(dispatched(w, epic)).toEqual(['slow#1', 'slow#2']);
    const again = dispatchOf(w, epic, 'slow', 2);
    const job = await runJob(w, bundle, {
      name: 'slow-2',
      workspace: await checkout(w, 'slow-2'),
      inputs: storyInputs(w, epic, 'slow', 2),
      runId: again.runId,
    });
    expect(job.code).toBe(0);
    expect(job.outputs['status']).toBe('done');
    // The transcripts stay for the workflow to upload as the job's artifact: the coder's
    // turn, then one log per gate command (this roster has two gates).
    const logs = job.outputs['logs'] ?? '';
    expect(logs).toMatch(/\/epicflow-logs\/epic-\d+-slow-2$/);
    expect(readdirSync(join(logs, 'logs', 'slow')).sort()).toEqual([
      '2-1-coder.log',
      '2-2-gates.log',
      '2-3-gates.log',
    ]);
    expect(await readFile(join(logs, 'logs', 'slow', '2-1-coder.log'), 'utf8')).toContain(
      'EPICFLOW_USAGE',
    );
    expect(job.summary).toContain(
      `| logs | setup, gates and each agent turn, whole, in this run's artifact \`epicflow-logs-${epic}-slow-2\` |`,
    );

    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    expect(await epicMergeTrailers(w, epic)).toEqual([['slow']]);
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/slow/index.js')).toBe(
      'export const story = "slow";\n',
    );
    expect((await store.read('slow'))?.record).toMatchObject({
      status: 'done',
      attempt: 2,
      mergeCommit: head,
    });
  }, 360_000);

  it('killed during its gates, the committed work is on GitHub, and the next attempt checks it instead of paying for the turn again', async () => {
    const { epic, runId, job: killed } = await signalledJob('late', 'late-gating', 'SIGKILL');
    const gating = join(w.dumps, 'late-gating');
    try {
      process.kill(Number(await readFile(gating, 'utf8')), 'SIGKILL');
    } catch {
      // Already gone.
    }
    expect(killed.work?.code).toBeNull();
    expect(turns('late')).toBe(1);
    // The turn's work was handed over before the work job was lost, and its publish job
    // put it on GitHub: the story branch, and the record's progress at that commit.
    expect(await w.gh.state.file(OWNER, REPO, `story/${epic}/late`, 'src/late/index.js')).toBe(
      'export const story = "late";\n',
    );
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('late'))?.record).toMatchObject({
      progress: { commit: await w.gh.state.ref(OWNER, REPO, `story/${epic}/late`) },
    });
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/late/index.js')).toBeUndefined();

    // The committed turn is not paid for again.
    await resumedOnce(epic, 'late', runId, 'failure', 1);
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/late/index.js')).toBe(
      'export const story = "late";\n',
    );
    expect((await store.read('late'))?.record).toMatchObject({
      status: 'done',
      attempt: 2,
      mergeCommit: head,
    });
  }, 360_000);
});

/** Whether process `pid` is still there (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('a story job cancelled during the coder turn (SIGINT, as the runner sends it)', () => {
  it('ends the coder and its folder, fails the story without dispatching it again; /resume merges it once', async () => {
    // The job's temp folder, where it makes its own: empty again once the job is over.
    const temp = join(w.dir, 'jobs', 'cancelled-tmp');
    mkdirSync(temp, { recursive: true, mode: 0o711 });
    const {
      epic,
      runId,
      job: cancelled,
    } = await signalledJob('cancelled', 'cancelled-started', 'SIGINT', { TMPDIR: temp });
    const started = join(w.dumps, 'cancelled-started');
    // The step ended by itself, failed, before the runner's SIGTERM would have come: the
    // coder it started is gone without anyone else ending it, and so is its folder.
    expect(cancelled.work?.code).toBe(1);
    expect(cancelled.work?.stdout).toContain(
      'SIGINT: the step is cancelled: stopping, and handing over what is done',
    );
    expect(alive(Number(await readFile(started, 'utf8')))).toBe(false);
    expect(readdirSync(temp)).toEqual([]);
    // A person cancelled it: the story fails, so nothing dispatches it again by itself, and
    // its publish job records that with what it handed over.
    const failed = {
      status: 'failed',
      reason: 'its job was cancelled; /resume continues it from what was committed',
    };
    expect(cancelled.work?.outputs['status']).toBe('failed');
    expect(cancelled.publish?.summary).toContain(failed.reason);
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cancelled'))?.record).toMatchObject(failed);
    expect(dispatched(w, epic)).toEqual(['cancelled#1']);
    expect(turns('cancelled')).toBe(1);

    // Nothing was committed before the cancel: the next attempt pays for a turn of its own.
    await resumedOnce(epic, 'cancelled', runId, 'cancelled', 2);
    expect(await epicMergeTrailers(w, epic)).toEqual([['cancelled']]);
  }, 360_000);
});
