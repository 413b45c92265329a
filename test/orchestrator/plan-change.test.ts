/**
 * A started story whose plan entry changed restarts from the epic head in its story jobs: the
 * record the jobs read already carries the new plan hash and the `restart` marker (written at
 * dispatch), so the old story branch on GitHub, with work done for the old entry, must not be
 * resumed — not even after a work job killed before it handed anything over, whose publish job
 * failed the record. The jobs run in-process (test/orchestrator/support/story-jobs.ts) and the
 * orchestrator decides each event the double delivers (the edit, `/resume`, a finished run) as
 * the App and the Action's orchestrate mode call it (`toEpicEvent`, `handleEpicEvent`). A
 * restart right after `/resume` is the engine's (test/engine/restart-marker.test.ts); a work
 * job killed as a process is the bundle's (test/action/killed-job.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import type { StoryRecord } from '../../src/core/model.js';
import { commentInProcess, decideInProcess, runEndedInProcess } from '../action/support/epic.js';
import {
  dispatched,
  epicMergeTrailers,
  dispatchOf,
  git,
  OWNER,
  planBody,
  REPO,
  startEpic,
  startWorld,
  type ActionWorld,
} from '../action/support/world.js';
import { prepareStoryJob, publishJob, workInput, workJob } from './support/story-jobs.js';

/**
 * The scripted coder. argv: <state dir>. Its first turn on a story writes `old.txt` and a
 * module the gate rejects; every later turn writes `new.txt` and a good module. The state dir
 * is outside every checkout.
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
} else {
  writeFileSync('src/' + story + '/new.txt', 'work for the new plan entry\\n');
  writeFileSync('src/' + story + '/index.js', 'export const story = ' + JSON.stringify(story) + ';\\n');
}
console.log('EPICFLOW_USAGE {"input":100,"output":20,"model":"scripted"}');
`;

let w: ActionWorld;

beforeAll(async () => {
  w = await startWorld({
    config: (dumps) =>
      [
        'executors:',
        '  - id: scripted',
        '    harness: command',
        `    command: ${JSON.stringify(['node', join(dirname(dumps), 'plan-change-coder.mjs'), dumps])}`,
        '    slots: 4',
        'gates: ["sh check.sh"]',
        'fixRounds: 0',
        '',
      ].join('\n'),
  });
  await writeFile(join(w.dir, 'plan-change-coder.mjs'), CODER);
});
afterAll(async () => {
  await w.close();
});

async function recordOf(epic: number, story: string): Promise<StoryRecord | undefined> {
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  return (await store.read(story))?.record;
}

/** The dispatched run of `story#attempt`, started as the runner starts it. */
async function startRun(epic: number, story: string, attempt: number): Promise<number> {
  const { runId } = dispatchOf(w, epic, story, attempt);
  w.gh.act.startWorkflowRun(runId);
  await w.gh.idle();
  return runId;
}

/**
 * Story `api` runs once and fails its gate with `old.txt` on its pushed branch; then alice
 * edits its plan entry (the edit is delivered to the orchestrator). Returns the old branch
 * head and the old plan hash.
 */
async function failThenEdit(epic: number): Promise<{ oldHead: string; oldHash: string }> {
  expect(dispatched(w, epic)).toEqual(['api#1']);
  const runId = await startRun(epic, 'api', 1);
  const input = await workInput(w, epic, 'api');
  expect((await workJob(input)).record.status).toBe('failed');
  expect((await publishJob(w, input)).record.status).toBe('failed');
  await runEndedInProcess(w, runId, 'failure');
  const failed = await recordOf(epic, 'api');
  expect(failed).toMatchObject({ status: 'failed', attempt: 1 });
  const oldHead = (await w.gh.state.ref(OWNER, REPO, `story/${epic}/api`)) ?? '';
  expect(await git(w.gh.state.repoDir(OWNER, REPO), 'show', `${oldHead}:src/api/old.txt`)).toBe(
    'work for the old plan entry',
  );

  const body = planBody([{ id: 'api' }]).replace('Implement api.', 'Implement api, version 2.');
  w.gh.act.editIssue('alice', { owner: OWNER, repo: REPO, number: epic, body });
  const edited = await decideInProcess(w, 'issues', 'edited', (p) => {
    return (p['issue'] as { number?: unknown }).number === epic;
  });
  expect(edited.dispatched).toEqual([]);
  // A started story is not restarted by the edit itself, only on /resume.
  expect(dispatched(w, epic)).toEqual(['api#1']);
  expect(await recordOf(epic, 'api')).toMatchObject({ status: 'failed', attempt: 1 });
  return { oldHead, oldHash: failed?.planHash ?? '' };
}

/** /resume dispatches the next attempt of `api`, its record marked to restart. */
async function resume(epic: number, attempt: number, oldHash: string): Promise<void> {
  const resumed = await commentInProcess(w, 'alice', epic, '/resume');
  expect(resumed.dispatched).toEqual([`api#${attempt}`]);
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
  expect(await epicMergeTrailers(w, epic)).toEqual([['api']]);
  // The old attempt's commits are in neither the epic branch nor the story branch.
  const contains = await git(bare, 'branch', '--contains', oldHead, '--format=%(refname:short)');
  expect(contains).toBe('');

  const record = await recordOf(epic, 'api');
  expect(record).toMatchObject({ status: 'done', attempt, mergeCommit: head });
  expect(record?.planHash).not.toBe(oldHash);
  expect(record).not.toHaveProperty('restart');
}

describe('a started story whose plan entry changed, in its story jobs', () => {
  // One run for both: the first restarting job is killed, the next one restarts all the same.
  it('restarts from the epic head on /resume, also after the restarting job was killed: only the new work is merged, once', async () => {
    const epic = await startEpic(w, planBody([{ id: 'api' }]));
    const { oldHead, oldHash } = await failThenEdit(epic);
    await resume(epic, 2, oldHash);

    // The restarting work job reads the marked record, then is killed in its coder turn: it
    // hands nothing over, so its publish job finds no result (the workflow says the work job
    // was cancelled), pushes nothing and fails the record, keeping the marker.
    const killedRun = await startRun(epic, 'api', 2);
    const killed = await workInput(w, epic, 'api', { attempt: 2 });
    expect((await prepareStoryJob(killed)).prior).toMatchObject({
      attempt: 2,
      restart: 'fresh',
    });
    expect(existsSync(killed.resultDir)).toBe(false);
    const epicHead = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    const published = await publishJob(w, killed, undefined, undefined, 'cancelled');
    expect(published.pushes).toBe(0);
    expect(published.record.reason).toContain(
      'the work job was cancelled before it handed its result over',
    );
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/api`)).toBe(oldHead);
    expect(await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(epicHead);
    expect(await recordOf(epic, 'api')).toMatchObject({
      status: 'failed',
      attempt: 2,
      restart: 'fresh',
    });

    await runEndedInProcess(w, killedRun, 'failure');
    expect(await recordOf(epic, 'api')).toMatchObject({ status: 'failed', restart: 'fresh' });
    await resume(epic, 3, oldHash);

    const runId = await startRun(epic, 'api', 3);
    const input = await workInput(w, epic, 'api', { attempt: 3 });
    const work = await workJob(input);
    expect(work.record.status).toBe('done');
    expect(work.events.filter((e) => e.story === 'api').map((e) => e.message)).toContain(
      `plan entry changed since story/${epic}/api was created: starting over from the epic head`,
    );
    const publish = await publishJob(w, input);
    expect(publish.record.status).toBe('done');
    expect(publish.pushes).toBe(1);
    await runEndedInProcess(w, runId, 'success');
    await expectNewWorkMerged(epic, 3, oldHash, oldHead);
  });
});
