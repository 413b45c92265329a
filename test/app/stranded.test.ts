/**
 * A story is recorded `active` right before its job is dispatched. When the
 * dispatch fails after that write (GitHub answered 502, the process died), or
 * the run is cancelled before the job recorded anything, the record stayed
 * active for ever and no command could run the story again. Now the story
 * fails with a reason (for a dispatch without a run: once 15 minutes have
 * passed, seen at the next decision), and `/resume` restarts it with a new
 * attempt, dispatched once even when two `/resume` arrive together. A story whose
 * run exists (queued for a runner, or running) is never failed that way, however long.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  botComments,
  commentsOn,
  completeStory,
  dispatched,
  dispatchOf,
  OWNER,
  planBody,
  readRecord,
  REPO,
  say,
  startApp,
  writeRecord,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

const exec = promisify(execFile);

/** How many merges of `story` the epic branch holds. */
async function merges(epic: number, story: string): Promise<number> {
  const { stdout } = await exec('git', [
    '--git-dir',
    w.gh.state.repoDir(OWNER, REPO),
    'log',
    '--first-parent',
    '--format=%B%x00',
    `refs/heads/epic/${epic}`,
  ]);
  return stdout.split('\0').filter((m) => m.includes(`Epicflow-Story: ${story}`)).length;
}

function statusComment(epic: number): string {
  return botComments(w, epic).find((c) => c.includes(`epicflow · epic #${epic}`)) ?? '';
}

/** Two writers' `/resume` at once: both delivered before the App handled either. */
async function resumeTwice(epic: number): Promise<void> {
  w.gh.act.comment('alice', { owner: OWNER, repo: REPO, number: epic, body: '/resume' });
  w.gh.act.comment('alice', { owner: OWNER, repo: REPO, number: epic, body: '/resume' });
  await w.gh.idle();
}

describe('a story recorded active whose job never recorded an outcome', () => {
  it('whose dispatch failed after the record was written fails once 15 minutes passed, and /resume runs it once', async () => {
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Dispatch lost',
      body: planBody([{ id: 'api' }]),
      author: 'alice',
    });
    const epic = issue.number;
    // GitHub answers the dispatch with a 502 and starts no run (the App logs the failure).
    w.gh.faults.add({ route: 'actions/create-workflow-dispatch', status: 502 });
    w.expectError(/cannot dispatch/);
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
    await w.gh.idle();
    expect(dispatched(w.gh, epic)).toEqual([]);
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active', attempt: 1 });

    // Within the grace period nothing is judged, nor asked: the run may just be slow to appear.
    const listings = (): number => w.gh.stats.rest['actions/list-workflow-runs'] ?? 0;
    await say(w, epic, '/status');
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active', attempt: 1 });
    expect(listings()).toBe(0);

    // Twenty minutes later (the record says when it was dispatched) there is still no run.
    const at = new Date(Date.now() - 20 * 60_000).toISOString();
    await writeRecord(w, epic, 'api', (r) => ({ ...r, startedAt: at }));
    await say(w, epic, '/status');
    // One request asked GitHub whether the overdue story's run exists.
    expect(listings()).toBe(1);
    // The time alone on the same UTC day, with the date otherwise (just after midnight).
    const today = new Date().toISOString().slice(0, 10);
    const when = at.startsWith(today) ? at.slice(11, 16) : `${at.slice(0, 10)} ${at.slice(11, 16)}`;
    const reason = `dispatched at ${when} UTC but no run started within 15 minutes`;
    expect(await readRecord(w, epic, 'api')).toMatchObject({
      status: 'failed',
      attempt: 1,
      reason,
    });
    expect(statusComment(epic)).toContain(reason);
    const sub = w.gh.state.issues(OWNER, REPO).find((i) => i.title.includes('api'));
    const onSub = commentsOn(w.gh, sub?.number ?? -1).map((c) => c.body);
    expect(onSub.join('\n')).toContain('**Story `api` failed** (attempt 1)');

    await resumeTwice(epic);
    expect(dispatched(w.gh, epic)).toEqual(['api#2']);
    await completeStory(w, epic, 'api', 2);
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'done', attempt: 2 });
    expect(await merges(epic, 'api')).toBe(1);
    expect(dispatched(w.gh, epic)).toEqual(['api#2']);
  });

  it('whose run was cancelled before the job recorded anything fails, and /resume runs it once', async () => {
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Run cancelled',
      body: planBody([{ id: 'api' }, { id: 'ui', dependsOn: ['api'] }]),
      author: 'alice',
    });
    const epic = issue.number;
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
    await w.gh.idle();
    expect(dispatched(w.gh, epic)).toEqual(['api#1']);
    // Cancelled while queued: the job never started, so it wrote nothing.
    w.gh.act.completeWorkflowRun(dispatchOf(w.gh, epic, 'api').runId, 'cancelled');
    await w.gh.idle();
    expect(await readRecord(w, epic, 'api')).toMatchObject({
      status: 'failed',
      attempt: 1,
      reason: 'the job ended (cancelled) without recording an outcome',
    });
    expect(await readRecord(w, epic, 'ui')).toMatchObject({
      status: 'waiting',
      reason: 'waiting for api',
    });

    await resumeTwice(epic);
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'api#2']);
    await completeStory(w, epic, 'api', 2);
    expect(await merges(epic, 'api')).toBe(1);
    // Its dependent starts once api merged.
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'api#2', 'ui#1']);
  });

  it('is left running past 15 minutes while its run exists, queued or in progress', async () => {
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Long story',
      body: planBody([{ id: 'api' }]),
      author: 'alice',
    });
    const epic = issue.number;
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
    await w.gh.idle();
    const at = new Date(Date.now() - 40 * 60_000).toISOString();
    await writeRecord(w, epic, 'api', (r) => ({ ...r, startedAt: at }));
    // Queued for a runner for 40 minutes: the run exists.
    await say(w, epic, '/status');
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active', attempt: 1 });
    w.gh.act.startWorkflowRun(dispatchOf(w.gh, epic, 'api').runId);
    await w.gh.idle();
    await say(w, epic, '/resume');
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active', attempt: 1 });
    expect(dispatched(w.gh, epic)).toEqual(['api#1']);
    await completeStory(w, epic, 'api');
    expect(await merges(epic, 'api')).toBe(1);
  });
});
