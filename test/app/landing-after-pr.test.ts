/**
 * What the App decides once an epic is delivered (src/orchestrator/after-pr.ts, landing.ts):
 * its pull request merged or closed without a merge, and a landing whose run ended without
 * recording its outcome. The story job is the harness's (`completeStory`): these rules need
 * an epic whose stories merged, not a run of the Action (the landings themselves run the
 * bundle in test/action/landing.test.ts).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { readLandLog, type LandRecord } from '../../src/core/land/index.js';
import { handleEpicEvent, toEpicEvent } from '../../src/orchestrator/index.js';
import {
  APP_CONFIG,
  botComments,
  completeStory,
  dispatched,
  dispatchOf,
  OWNER,
  planBody,
  REPO,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

const BOARD = 'https://github.com/orgs/acme/projects/1';

let w: AppWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

async function start(options: { board?: boolean } = {}): Promise<AppWorld> {
  w = await startApp({
    config: `${APP_CONFIG}${options.board === true ? `board: { project: "${BOARD}" }\n` : ''}`,
  });
  if (options.board === true) w.gh.seed.project({ owner: OWNER, number: 1 });
  return w;
}

/** An epic of one story (`cart`), delivered: its pull request is ready. */
async function delivered(app: AppWorld): Promise<{ epic: number; pr: number }> {
  const epic = await startEpic(app, 'Checkout', planBody([{ id: 'cart' }]));
  await completeStory(app, epic, 'cart');
  const pr = await app.repo.findOpenPr(`epic/${epic}`, 'main');
  expect(pr?.draft).toBe(false);
  return { epic, pr: pr?.number ?? 0 };
}

async function pushMain(app: AppWorld, files: Record<string, string>): Promise<string> {
  const sha = await app.gh.act.pushFiles('alice', {
    owner: OWNER,
    repo: REPO,
    branch: 'main',
    files,
    message: 'Work on main',
  });
  await app.gh.idle();
  return sha;
}

async function landings(app: AppWorld, epic: number): Promise<readonly LandRecord[]> {
  const store = new GitHubStateStore({ repo: app.repo, epic: String(epic) });
  const doc = await store.readJson<unknown>('land');
  return readLandLog(doc?.value ?? null, 'land.json').lands;
}

describe('after the pull request', () => {
  it('merged: the issue is closed with the report, the board is Done, story branches are deleted, and a redelivery does nothing twice', async () => {
    const app = await start({ board: true });
    const { epic, pr } = await delivered(app);
    const { gh } = app;
    expect(await gh.state.ref(OWNER, REPO, `story/${epic}/cart`)).toBeDefined();
    await gh.act.mergePullRequest('alice', { owner: OWNER, repo: REPO, number: pr });
    await gh.idle();
    expect(gh.state.issue(OWNER, REPO, epic)?.state).toBe('closed');
    const landed = botComments(app, epic).filter((b) => b.includes('epicflow:landed'));
    expect(landed).toHaveLength(1);
    expect(landed[0]).toContain(`pull request #${pr} was merged into main`);
    expect(landed[0]).toContain('cart');
    const subs = await app.repo.listSubIssues(epic);
    expect(subs.map((s) => s.state)).toEqual(['closed']);
    const project = gh.state.project(OWNER, 1);
    const status = project?.fields.find((f) => f.name === 'Status');
    const done = status?.options.find((o) => o.name === 'Done')?.id;
    expect(project?.items.length).toBe(1);
    for (const item of project?.items ?? []) {
      const value = item.values.get(status?.id ?? '');
      expect(
        value !== undefined && 'singleSelectOptionId' in value && value.singleSelectOptionId,
      ).toBe(done);
    }
    expect(await gh.state.ref(OWNER, REPO, `story/${epic}/cart`)).toBeUndefined();
    // The repository keeps merged branches: so does epicflow.
    expect(await gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBeDefined();
    const comments = gh.state.comments(OWNER, REPO).length;
    const closed = gh.deliveries.find((d) => d.event === 'pull_request');
    if (closed === undefined) throw new Error('no pull_request delivery');
    await gh.redeliver(closed.id);
    await gh.idle();
    expect(gh.state.comments(OWNER, REPO)).toHaveLength(comments);
    // Landed: a later push to main starts nothing for it.
    await pushMain(app, { 'docs/after.md': 'after\n' });
    expect(dispatched(gh, epic)).toEqual(['cart#1']);
  });

  it('closed without a merge: the epic is held and the issue says how to go on', async () => {
    const app = await start();
    const { epic, pr } = await delivered(app);
    const { gh } = app;
    // A payload claiming the open pull request was merged: GitHub's word is read, not the payload's.
    const forged = toEpicEvent('pull_request', {
      action: 'closed',
      number: pr,
      pull_request: { merged: true, merge_commit_sha: 'f'.repeat(40) },
      sender: { login: 'mallory', type: 'User' },
    });
    if (forged === null) throw new Error('not mapped');
    const result = await handleEpicEvent({ repo: app.repo }, forged);
    expect(result).toMatchObject({ outcome: 'ignored', reason: `pull request #${pr} is open` });
    expect(gh.state.issue(OWNER, REPO, epic)?.state).toBe('open');
    await app.repo.octokit.rest.pulls.update({
      owner: OWNER,
      repo: REPO,
      pull_number: pr,
      state: 'closed',
    });
    await gh.idle();
    expect(gh.state.issue(OWNER, REPO, epic)?.state).toBe('open');
    const held = botComments(app, epic).find((b) => b.includes('epicflow:landed')) ?? '';
    expect(held).toContain(`pull request #${pr} was closed without being merged`);
    expect(held).toContain(`Reopen pull request #${pr}`);
    expect(held).toContain('/resume');
    await pushMain(app, { 'docs/after.md': 'after\n' });
    expect(dispatched(gh, epic)).toEqual(['cart#1']);
  });
});

describe('a landing whose run ended without recording its outcome', () => {
  it('is marked not landed, with the reason, and holds the epic', async () => {
    const app = await start();
    const { epic } = await delivered(app);
    const { gh } = app;
    await pushMain(app, { 'docs/guide.md': '# guide\n' });
    expect(dispatched(gh, epic)).toEqual(['cart#1', 'land-1#1']);
    // The run is cancelled before its job did anything.
    const { runId } = dispatchOf(gh, epic, 'land-1');
    gh.act.startWorkflowRun(runId);
    gh.act.completeWorkflowRun(runId, 'cancelled');
    await gh.idle();
    const [record] = await landings(app, epic);
    expect(record).toMatchObject({ outcome: 'not-landed' });
    expect(record?.reason).toContain('cancelled');
    const status = botComments(app, epic).find((b) => b.includes('epicflow:status')) ?? '';
    expect(status).toContain('land-1: main does not merge into');
    // Held: the next push to main starts no landing.
    await pushMain(app, { 'docs/more.md': 'more\n' });
    expect(dispatched(gh, epic)).toEqual(['cart#1', 'land-1#1']);
  });
});
