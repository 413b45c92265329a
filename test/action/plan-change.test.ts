/**
 * A started story whose plan entry changed restarts from the epic head in the
 * Action job too: the record the job reads already carries the new plan hash
 * (written at dispatch), so the old story branch on GitHub, with work done for
 * the old entry, must not be resumed — not even after a job killed mid-way.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import type { StoryRecord } from '../../src/core/model.js';
import { commentAs, deliveredPayload, orchestrate, runCompleted } from './support/epic.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  dispatched,
  git,
  planBody,
  runJob,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';

/**
 * The scripted coder. argv: <state dir>. Its first turn on a story writes
 * `old.txt` and a module the gate rejects; with a `hang` file it tells the
 * test it is coding and waits to be killed; every later turn writes `new.txt`
 * and a good module. The state dir is outside every checkout.
 */
const CODER = `
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
const [state] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY;
const key = state + '/' + process.env.EPICFLOW_EPIC + '-' + story;
mkdirSync(state, { recursive: true });
mkdirSync('src/' + story, { recursive: true });
if (!existsSync(key + '-first')) {
  writeFileSync(key + '-first', '');
  writeFileSync('src/' + story + '/old.txt', 'work for the old plan entry\\n');
  writeFileSync('src/' + story + '/index.js', 'module.exports = {};\\n');
} else if (existsSync(key + '-hang') && !existsSync(key + '-started')) {
  writeFileSync(key + '-started', String(process.pid));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
} else {
  writeFileSync('src/' + story + '/new.txt', 'work for the new plan entry\\n');
  writeFileSync('src/' + story + '/index.js', 'export const story = ' + JSON.stringify(story) + ';\\n');
}
console.log('EPICFLOW_USAGE {"input":100,"output":20,"model":"scripted"}');
`;

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
        `    command: ${JSON.stringify(['node', join(dirname(dumps), 'plan-change-coder.mjs'), dumps])}`,
        '    slots: 4',
        'gates: ["node check.mjs"]',
        'fixRounds: 0',
        '',
      ].join('\n'),
  });
  await writeFile(join(w.dir, 'plan-change-coder.mjs'), CODER);
});
afterAll(async () => {
  await w.close();
  await rm(bundleDir, { recursive: true, force: true });
});

async function recordOf(epic: number, story: string): Promise<StoryRecord | undefined> {
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  return (await store.read(story))?.record;
}

/** Runs a dispatched story job as the runner would (its run started first). */
async function runStory(epic: number, story: string, attempt: number): Promise<JobRun> {
  const { runId } = dispatchOf(w, epic, story, attempt);
  w.gh.act.startWorkflowRun(runId);
  await w.gh.idle();
  return runJob(w, bundle, {
    name: `${epic}-${story}-${attempt}`,
    workspace: await checkout(w, `${epic}-${story}-${attempt}`),
    inputs: storyInputs(w, epic, story, attempt),
    runId,
  });
}

/**
 * Story `api` runs once and fails its gate with `old.txt` on its pushed
 * branch; then alice edits its plan entry (the edit is delivered to the
 * orchestrator). Returns the old branch head and the old plan hash.
 */
async function failThenEdit(epic: number): Promise<{ oldHead: string; oldHash: string }> {
  expect(dispatched(w, epic)).toEqual(['api#1']);
  const first = await runStory(epic, 'api', 1);
  expect(first.code).toBe(1);
  expect(first.outputs['status']).toBe('failed');
  expect(
    await runCompleted(w, bundle, dispatchOf(w, epic, 'api', 1).runId, 'failure'),
  ).toMatchObject({ code: 0 });
  const failed = await recordOf(epic, 'api');
  expect(failed).toMatchObject({ status: 'failed', attempt: 1 });
  const oldHead = (await w.gh.state.ref(OWNER, REPO, `story/${epic}/api`)) ?? '';
  expect(await git(w.gh.state.repoDir(OWNER, REPO), 'show', `${oldHead}:src/api/old.txt`)).toBe(
    'work for the old plan entry',
  );

  const body = planBody([{ id: 'api' }]).replace('Implement api.', 'Implement api, version 2.');
  w.gh.act.editIssue('alice', { owner: OWNER, repo: REPO, number: epic, body });
  const edited = await orchestrate(
    w,
    bundle,
    `edited-${epic}`,
    'issues',
    await deliveredPayload(w.gh, 'issues', 'edited', (p) => {
      return (p['issue'] as { number?: unknown }).number === epic;
    }),
  );
  expect(edited.code).toBe(0);
  // A started story is not restarted by the edit itself, only on /resume.
  expect(dispatched(w, epic)).toEqual(['api#1']);
  return { oldHead, oldHash: failed?.planHash ?? '' };
}

/** /resume dispatches the next attempt of `api`, its record marked to restart. */
async function resume(epic: number, attempt: number, oldHash: string): Promise<void> {
  const resumed = await commentAs(w, bundle, 'alice', epic, '/resume');
  expect(resumed.code).toBe(0);
  expect(dispatched(w, epic)).toContain(`api#${attempt}`);
  const record = await recordOf(epic, 'api');
  expect(record).toMatchObject({ status: 'active', attempt, restart: 'fresh' });
  expect(record?.planHash).not.toBe(oldHash);
}

/** What the user sees once `api` merged: the new work only, merged once, recorded. */
async function expectNewWorkMerged(
  epic: number,
  attempt: number,
  oldHash: string,
  oldHead: string,
): Promise<void> {
  const branch = `epic/${epic}`;
  expect(await w.gh.state.file(OWNER, REPO, branch, 'src/api/new.txt')).toBe(
    'work for the new plan entry\n',
  );
  expect(await w.gh.state.file(OWNER, REPO, branch, 'src/api/old.txt')).toBeUndefined();
  expect(await w.gh.state.file(OWNER, REPO, branch, 'src/api/index.js')).toBe(
    'export const story = "api";\n',
  );
  const head = await w.gh.state.ref(OWNER, REPO, branch);
  const bare = w.gh.state.repoDir(OWNER, REPO);
  const merges = await git(
    bare,
    'log',
    '--first-parent',
    '--merges',
    '--format=%(trailers:key=Epicflow-Story,valueonly,separator=)',
    head ?? '',
  );
  expect(merges.split('\n').filter((l) => l.trim() !== '')).toEqual(['api']);
  // The old attempt's commits are in neither the epic branch nor the story branch.
  const contains = await git(bare, 'branch', '--contains', oldHead, '--format=%(refname:short)');
  expect(contains).toBe('');

  const record = await recordOf(epic, 'api');
  expect(record).toMatchObject({ status: 'done', attempt, mergeCommit: head });
  expect(record?.planHash).not.toBe(oldHash);
  expect(record).not.toHaveProperty('restart');
}

/** Waits for a file the coder writes (bounded: the coder writes it within seconds). */
async function waitForFile(path: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(path); i++) await sleep(50);
  if (!existsSync(path)) throw new Error(`${path} never appeared`);
}

describe('a started story whose plan entry changed, in the Action', () => {
  // One run for both: the first restarting job is killed, the next one restarts all the
  // same. A restart that is not killed first is the engine's (test/engine/restart-marker.test.ts).
  it('restarts from the epic head on /resume, also after the restarting job was killed: only the new work is merged, once', async () => {
    const epic = await startEpic(w, planBody([{ id: 'api' }]));
    const { oldHead, oldHash } = await failThenEdit(epic);
    await resume(epic, 2, oldHash);

    // The restarting work job is killed while its coder works: it saved its records
    // (without the marker) in its scratch state and handed nothing over; its publish job
    // found no result, pushed nothing and failed the record, keeping the marker.
    await writeFile(join(w.dumps, `${epic}-api-hang`), '');
    const started = join(w.dumps, `${epic}-api-started`);
    const { runId } = dispatchOf(w, epic, 'api', 2);
    w.gh.act.startWorkflowRun(runId);
    await w.gh.idle();
    const killed = await runJob(w, bundle, {
      name: `${epic}-api-2`,
      workspace: await checkout(w, `${epic}-api-2`),
      inputs: storyInputs(w, epic, 'api', 2),
      runId,
      onSpawn: (child) => {
        void waitForFile(started).then(() => child.kill('SIGKILL'));
      },
    });
    // The coder was left behind by its killed parent; end it too, by its pid.
    try {
      process.kill(Number(await readFile(started, 'utf8')), 'SIGKILL');
    } catch {
      // Already gone.
    }
    expect(killed.work?.code).toBeNull();
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/api`)).toBe(oldHead);
    expect(await recordOf(epic, 'api')).toMatchObject({ status: 'failed', restart: 'fresh' });

    expect((await runCompleted(w, bundle, runId, 'failure')).code).toBe(0);
    expect(await recordOf(epic, 'api')).toMatchObject({ status: 'failed', restart: 'fresh' });
    await resume(epic, 3, oldHash);

    const job = await runStory(epic, 'api', 3);
    expect(job.code).toBe(0);
    expect(job.outputs['status']).toBe('done');
    expect(job.stdout).toContain(
      `api: plan entry changed since story/${epic}/api was created: starting over from the epic head`,
    );
    await expectNewWorkMerged(epic, 3, oldHash, oldHead);
  }, 900_000);
});
