/**
 * Keeping an epic mergeable, end to end: the App hears the double's `push` webhooks; each
 * `land-<n>` job is the Action's bundle run as
 * a process, with a scripted coder (`command` harness) that resolves, fails or races. The
 * epics they land are delivered by the App harness (`completeStory`).
 *
 * @needs root
 */
import { agentScript } from './support/agents.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { readLandLog, type LandRecord } from '../../src/core/land/index.js';
import { handleEpicEvent, toEpicEvent } from '../../src/orchestrator/index.js';
import { botComments, completeStory, startEpic, type AppWorld } from '../app/harness.js';
import { startAppActionWorld, type AppActionWorld } from './support/app-world.js';
import {
  checkout,
  dispatchOf,
  dispatched,
  OWNER,
  planBody,
  REPO,
  runJob,
  storyInputs,
  type JobRun,
} from './support/world.js';

const LAND_CODER = agentScript('land-coder.mjs');

let world: AppActionWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function start(): Promise<AppActionWorld> {
  world = await startAppActionWorld('landing', (dumps) =>
    [
      'executors:',
      '  - id: scripted',
      '    harness: command',
      `    command: ${JSON.stringify(['node', LAND_CODER, dumps])}`,
      '    slots: 4',
      'gates: ["sh check.sh"]',
      'fixRounds: 0',
      '',
    ].join('\n'),
  );
  return world;
}

/** Plain git in the double's bare repository. */
function git(aw: AppActionWorld, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: aw.app.gh.state.repoDir(OWNER, REPO),
    encoding: 'utf8',
  }).trim();
}

async function ref(aw: AppActionWorld, branch: string): Promise<string | undefined> {
  return aw.app.gh.state.ref(OWNER, REPO, branch);
}

/** One job of the story workflow, as the runner runs it: started, the bundle, completed. */
async function runDispatched(aw: AppActionWorld, epic: number, story: string): Promise<JobRun> {
  const { w, bundle } = aw;
  const { runId } = dispatchOf(w, epic, story);
  w.gh.act.startWorkflowRun(runId);
  await w.gh.idle();
  const job = await runJob(w, bundle, {
    name: `${story}-${epic}`,
    workspace: await checkout(w, `${story}-${epic}`),
    inputs: storyInputs(w, epic, story),
    runId,
  });
  w.gh.act.completeWorkflowRun(runId, job.code === 0 ? 'success' : 'failure');
  await w.gh.idle();
  return job;
}

/**
 * An epic of one story (`cart`, writing src/cart/index.js as the scripted coder does),
 * delivered by the App harness (`completeStory`): its pull request is ready. What this file
 * asserts is the landings; a story job delivering is story.test.ts's.
 */
async function delivered(aw: AppActionWorld): Promise<{ epic: number; pr: number }> {
  const epic = await startEpic(aw.app, 'Checkout', planBody([{ id: 'cart' }]));
  await completeStory(aw.app, epic, 'cart', 1, undefined, {
    path: 'src/cart/index.js',
    content: 'export const story = "cart";\n',
  });
  const pr = await aw.w.repo.findOpenPr(`epic/${epic}`, 'main');
  expect(pr?.draft).toBe(false);
  return { epic, pr: pr?.number ?? 0 };
}

async function pushMain(aw: AppActionWorld, files: Record<string, string>): Promise<string> {
  const sha = await aw.app.gh.act.pushFiles('alice', {
    owner: OWNER,
    repo: REPO,
    branch: 'main',
    files,
    message: 'Work on main',
  });
  await aw.app.gh.idle();
  return sha;
}

async function landings(aw: AppActionWorld, epic: number): Promise<readonly LandRecord[]> {
  const store = new GitHubStateStore({ repo: aw.w.repo, epic: String(epic) });
  const doc = await store.readJson<unknown>('land');
  return readLandLog(doc?.value ?? null, 'land.json').lands;
}

async function setMode(aw: AppActionWorld, mode: 'resolve' | 'nothing' | 'race'): Promise<void> {
  await writeFile(join(aw.w.dumps, 'land-mode'), mode);
}

function statusComment(app: AppWorld, epic: number): string {
  return botComments(app, epic).find((b) => b.includes('epicflow:status')) ?? '';
}

describe('keeping the epic mergeable when the default branch moves', () => {
  it('a conflicting commit on main: land-1 resolves it with the coder, the epic branch holds the merge, the pull request is mergeable', async () => {
    const aw = await start();
    const { epic, pr } = await delivered(aw);
    const epicBefore = await ref(aw, `epic/${epic}`);
    const mainHead = await pushMain(aw, { 'src/cart/index.js': 'export const story = "main";\n' });
    expect(dispatched(aw.w, epic)).toEqual(['cart#1', 'land-1#1']);

    const job = await runDispatched(aw, epic, 'land-1');
    expect(job.code).toBe(0);
    expect(job.outputs['status']).toBe('landed');
    const epicAfter = await ref(aw, `epic/${epic}`);
    // A merge of the two heads, never a force: the old epic head is its first parent.
    expect(git(aw, 'log', '-1', '--format=%P', `epic/${epic}`).split(' ')).toEqual([
      epicBefore,
      mainHead,
    ]);
    const text = git(aw, 'show', `epic/${epic}:src/cart/index.js`);
    expect(text).not.toContain('<<<<<<<');
    expect(text).toContain('"cart"');
    expect(text).toContain('"main"');
    expect(git(aw, 'log', '-1', '--format=%B', `epic/${epic}`)).toContain('Epicflow-Land: main');
    const { data } = await aw.w.repo.octokit.rest.pulls.get({
      owner: OWNER,
      repo: REPO,
      pull_number: pr,
    });
    expect(data.mergeable).toBe(true);
    const [record] = await landings(aw, epic);
    expect(record).toMatchObject({
      job: 'land-1',
      outcome: 'landed',
      conflicts: ['src/cart/index.js'],
      rounds: 1,
      executors: ['scripted'],
      epicHeadAfter: epicAfter,
    });
    // The report on the pull request shows the landing, and the story still merged below it.
    expect(botComments(aw.app, pr).join('\n')).toContain('Landing `land-1` into `main`');
    expect([...(await aw.w.repo.mergedStories(`epic/${epic}`)).keys()]).toEqual(['cart']);
    expect(botComments(aw.app, epic).join('\n')).not.toContain('epicflow:failure');
  });

  it('a landing the coder cannot resolve pushes nothing and holds the epic with the paths listed', async () => {
    const aw = await start();
    const { epic } = await delivered(aw);
    await setMode(aw, 'nothing');
    const epicBefore = await ref(aw, `epic/${epic}`);
    await pushMain(aw, { 'src/cart/index.js': 'export const story = "main";\n' });
    const job = await runDispatched(aw, epic, 'land-1');
    expect(job.code).not.toBe(0);
    expect(await ref(aw, `epic/${epic}`)).toBe(epicBefore);
    const [record] = await landings(aw, epic);
    expect(record).toMatchObject({ outcome: 'not-landed', rounds: 3 });
    expect(record?.reason).toContain('conflict markers left in src/cart/index.js after 3 rounds');
    const status = statusComment(aw.app, epic);
    expect(status).toContain('src/cart/index.js');
    expect(status).toContain('/resume');
    // Held: the next push to main starts no landing.
    await pushMain(aw, { 'docs/more.md': 'more\n' });
    expect(dispatched(aw.w, epic)).toEqual(['cart#1', 'land-1#1']);
  });

  it('a clean push is merged and gated without a coder; pushes elsewhere, a redelivery and a push while it runs start nothing twice', async () => {
    const aw = await start();
    const { epic } = await delivered(aw);
    const { gh } = aw.app;
    // A push to another branch concerns no epic.
    await gh.act.pushFiles('alice', {
      owner: OWNER,
      repo: REPO,
      branch: `epic/${epic}`,
      files: { 'notes.md': 'by hand\n' },
      message: 'By hand',
    });
    await gh.idle();
    expect(dispatched(aw.w, epic)).toEqual(['cart#1']);
    const mainHead = await pushMain(aw, { 'docs/guide.md': '# guide\n' });
    expect(dispatched(aw.w, epic)).toEqual(['cart#1', 'land-1#1']);
    // The same delivery again: nothing new.
    const push = gh.deliveries.filter((d) => d.event === 'push').at(-1);
    if (push === undefined) throw new Error('no push delivery');
    await gh.redeliver(push.id);
    await gh.idle();
    // A second push while land-1 has not run: queued, not doubled.
    await pushMain(aw, { 'docs/second.md': '# second\n' });
    expect(dispatched(aw.w, epic)).toEqual(['cart#1', 'land-1#1']);

    const job = await runDispatched(aw, epic, 'land-1');
    expect(job.code).toBe(0);
    const lands = await landings(aw, epic);
    expect(lands[0]).toMatchObject({ job: 'land-1', outcome: 'landed', rounds: 0, conflicts: [] });
    expect(lands[0]?.intoHeadBefore).toBe(mainHead);
    expect(lands[0]?.executors).toEqual([]);
    expect(git(aw, 'show', `epic/${epic}:docs/guide.md`)).toBe('# guide');
    // The queued push starts land-2 once land-1 is done.
    expect(dispatched(aw.w, epic)).toEqual(['cart#1', 'land-1#1', 'land-2#1']);
    // A forged push naming a head main does not have lands nothing new: the head is read.
    const forged = toEpicEvent('push', {
      ref: 'refs/heads/main',
      after: 'f'.repeat(40),
      sender: { login: 'mallory', type: 'User' },
    });
    if (forged === null) throw new Error('not mapped');
    await handleEpicEvent({ repo: aw.w.repo }, forged);
    expect(dispatched(aw.w, epic)).toEqual(['cart#1', 'land-1#1', 'land-2#1']);
  });

  it('the epic branch moved while landing: the push with a lease is refused, and the landing is merged again on the new head, never overwriting it', async () => {
    const aw = await start();
    const { epic } = await delivered(aw);
    const { gh } = aw.app;
    await setMode(aw, 'race');
    await pushMain(aw, { 'src/cart/index.js': 'export const story = "main";\n' });
    const { runId } = dispatchOf(aw.w, epic, 'land-1');
    gh.act.startWorkflowRun(runId);
    await gh.idle();
    const running = runJob(aw.w, aw.bundle, {
      name: `race-${epic}`,
      workspace: await checkout(aw.w, `race-${epic}`),
      inputs: storyInputs(aw.w, epic, 'land-1'),
      runId,
    });
    // While the coder resolves, someone moves the epic branch on GitHub.
    const prompt = join(aw.w.dumps, 'land-1-prompt.txt');
    for (let i = 0; i < 600 && !existsSync(prompt); i++) await delay(100);
    const moved = await gh.act.pushFiles('alice', {
      owner: OWNER,
      repo: REPO,
      branch: `epic/${epic}`,
      files: { 'docs/meanwhile.md': 'meanwhile\n' },
      message: 'Meanwhile',
    });
    await writeFile(join(aw.w.dumps, 'go'), '');
    const job = await running;
    gh.act.completeWorkflowRun(runId, job.code === 0 ? 'success' : 'failure');
    await gh.idle();
    expect(job.code).toBe(0);
    expect(job.stdout).toContain('moved on GitHub; merging the landing again on its new head');
    // The commit made meanwhile is the new head's first parent, the landing its second:
    // nothing was overwritten, and main's resolution is kept.
    const [first, second] = git(aw, 'log', '-1', '--format=%P', `epic/${epic}`).split(' ');
    expect(first).toBe(moved);
    expect(git(aw, 'log', '-1', '--format=%P', second ?? '').split(' ')[1]).toBe(
      git(aw, 'rev-parse', 'main'),
    );
    expect(git(aw, 'show', `epic/${epic}:docs/meanwhile.md`)).toBe('meanwhile');
    const [record] = await landings(aw, epic);
    expect(record).toMatchObject({ outcome: 'landed', epicHeadBefore: moved });
    expect(record?.notes.join('\n')).toContain(
      "moved after the work job's gates ran on the landing",
    );
  });
});

/*
 * Where the rest is tested: a landing's run that ended without recording its outcome, and
 * the pull request merged or closed, in test/app/landing-after-pr.test.ts (the App's
 * decisions; the story is the App harness's); a late land job refused as stale in
 * test/core/epic/job-ref.test.ts; a land coder writing outside the land perimeter (a
 * workflow, README.md) put back in test/engine/land.test.ts (the same `bringIntoEpic`), and
 * a hand-over that writes what neither branch touched refused in land-publish.test.ts; a
 * commit on main epicflow did not hear of (the pull request a draft, land-1 dispatched, ready
 * once the landing recorded it) in test/app/landing-missed-commit.test.ts (the App's
 * decisions; a clean landing's job is the clean push's, above).
 */
