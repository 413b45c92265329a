/**
 * The App's GitHub request budget over a whole small epic (docs/benchmarks.md): counted
 * from the double's stats, the simulated story jobs' own requests left out. So
 * that a change which makes every decision re-read everything again shows here
 * as a failing count, never as a slow test.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import {
  APP_CONFIG,
  completeStory,
  dispatched,
  dispatchOf,
  jobDecision,
  OWNER,
  planBody,
  REPO,
  restRequests,
  startApp,
  startEpic,
  storyWrites,
  writeConfig,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

const FIVE = [
  { id: 'api' },
  { id: 'db' },
  { id: 'ui', dependsOn: ['api'] },
  { id: 'sync', dependsOn: ['api', 'db'] },
  { id: 'docs', dependsOn: ['ui', 'sync'] },
];

describe('requests per story', () => {
  // A whole epic through a real probot: room for a loaded machine (counts are asserted, not time).
  it('spends at most 5 REST requests per finished story, 1.4 GraphQL requests and 3 creations per story over a 5-story epic', async () => {
    const { gh } = w;
    const sum = (o: Record<string, number>): number => Object.values(o).reduce((a, b) => a + b, 0);
    const appRest = (): number => restRequests(gh) - w.jobRequests.rest;
    const rest0 = appRest();
    const graphql0 = sum(gh.stats.graphql);
    const created0 = gh.stats.contentCreating;
    const epic = await startEpic(w, 'Budget', planBody(FIVE));
    const atLabel = appRest() - rest0;
    const perFinished: number[] = [];
    const done = new Set<string>();
    while (done.size < FIVE.length) {
      const next = dispatched(gh, epic).find((d) => !done.has(d));
      if (next === undefined) throw new Error(`nothing running after ${[...done].join(', ')}`);
      done.add(next);
      const before = appRest();
      await completeStory(w, epic, next.split('#')[0] ?? '');
      perFinished.push(appRest() - before);
    }
    expect(dispatched(gh, epic)).toHaveLength(5);
    // A finished story: its sub-issue closed, the status and report comments updated and,
    // when it frees a dependent, that story's record and dispatch. Nothing notes the run:
    // its title names its story (6 with the run index).
    expect(Math.max(...perFinished)).toBeLessThanOrEqual(5);
    // The label: per story a sub-issue and its link, plus the epic's one-off setup (the
    // App's token, the configuration, permission, epic branch, draft pull request, the
    // first records and dispatches, the comments, the epic's owner recorded once so story
    // jobs acting as another login find the same sub-issues and comments). 32 today.
    expect(atLabel).toBeLessThanOrEqual(32);
    // 10.8 per story here, the label's one-off costs spread over only 5 stories; the same
    // costs come to 7.9 per story over the 20-story epic of `npm run bench -- app`, whose
    // goal is 8 (about 55 per story when every decision re-read each record, walked every
    // merge and listed comments).
    expect((appRest() - rest0) / FIVE.length).toBeLessThanOrEqual(10.8);
    // The epic view per decision and the pull request marked ready: 1.4.
    expect((sum(gh.stats.graphql) - graphql0) / FIVE.length).toBeLessThanOrEqual(1.4);
    expect((gh.stats.contentCreating - created0) / FIVE.length).toBeLessThanOrEqual(3);
    // Per decision (the label and one per finished story): the issue, its sub-issues, the
    // configuration, the records, the epic branch's head and the pull request come from one
    // GraphQL read; merges already walked are remembered; comments are listed once each.
    const decisions = FIVE.length + 1;
    expect(gh.stats.graphql['EpicflowEpicView']).toBe(decisions);
    expect(gh.stats.rest['git/get-blob'] ?? 0).toBe(0);
    expect(gh.stats.rest['git/get-commit'] ?? 0).toBeLessThanOrEqual(1);
    expect(gh.stats.rest['pulls/list'] ?? 0).toBe(0);
    expect(gh.stats.rest['issues/list-sub-issues'] ?? 0).toBe(0);
    expect(gh.stats.rest['issues/get'] ?? 0).toBe(0);
    expect(gh.stats.rest['issues/list-comments'] ?? 0).toBeLessThanOrEqual(2);
    // No run index on the state branch: the runs' titles named their stories.
    expect(await gh.state.file(OWNER, REPO, STATE_BRANCH, 'epics/runs/index.json')).toBeUndefined();
  }, 540_000);

  it('with a board and each story job deciding after its story, the App decides each run with one read and the epic costs at most 20 requests a story', async () => {
    const { gh } = w;
    gh.seed.project({ owner: OWNER, number: 2, title: 'Budget' });
    await writeConfig(
      w,
      `${APP_CONFIG}labels: { epic: epic }\nboard: { project: "https://github.com/orgs/acme/projects/2" }\n`,
    );
    const all = (): number =>
      restRequests(gh) + Object.values(gh.stats.graphql).reduce((a, b) => a + b, 0);
    const ops = (): Map<string, number> =>
      new Map([
        ...Object.entries(gh.stats.rest),
        ...Object.entries(gh.stats.graphql).map(([o, n]): [string, number] => [`graphql ${o}`, n]),
      ]);
    const start = all();
    const epic = await startEpic(w, 'Budget with a board', planBody(FIVE));
    const appAfterJob: Record<string, number>[] = [];
    const done = new Set<string>();
    while (done.size < FIVE.length) {
      const next = dispatched(gh, epic).find((d) => !done.has(d));
      if (next === undefined) throw new Error(`nothing running after ${[...done].join(', ')}`);
      done.add(next);
      const story = next.split('#')[0] ?? '';
      // The job: its writes, then its own decision (the board known from its start read).
      await storyWrites(w, epic, story);
      w.repo.cache.boards.set(w.repo.fullName, 'https://github.com/orgs/acme/projects/2');
      await jobDecision(w, epic, story);
      // Its run completes: the App finds the job's decision done.
      const before = ops();
      gh.act.completeWorkflowRun(dispatchOf(gh, epic, story).runId, 'success');
      await gh.idle();
      const delta: Record<string, number> = {};
      for (const [op, n] of ops())
        if (n > (before.get(op) ?? 0)) delta[op] = n - (before.get(op) ?? 0);
      appAfterJob.push(delta);
    }
    expect(dispatched(gh, epic)).toHaveLength(5);
    expect(
      gh.state
        .issues(OWNER, REPO)
        .find((i) => i.pull !== undefined && i.title.includes('Budget with'))?.pull?.draft,
    ).toBe(false);
    // Each completion after the job's decision: the epic view, nothing written. (The last
    // one may find the pull request to mark ready, if the job's decision did not.)
    for (const delta of appAfterJob.slice(0, -1)) {
      expect(delta).toEqual({ 'graphql EpicflowEpicView': 1 });
    }
    // Everything (App and the jobs' writes and decisions, REST and GraphQL) over 5 stories,
    // the label's one-off setup (about 7 a story here) included: 19.4 today, the scale
    // benchmark's goal is 20 (it was about 26 when the App's decision rewrote the comments'
    // time and every decision read the board).
    expect((all() - start) / FIVE.length).toBeLessThanOrEqual(20);
    // The board is read by the label's decision only (opened, then again once its fields
    // are set up): every later view reads it along.
    expect(gh.stats.graphql['EpicflowBoard'] ?? 0).toBe(2);
  }, 540_000);
});
