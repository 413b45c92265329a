/**
 * The App's GitHub request budget over a whole small epic (docs/benchmarks.md): counted
 * from the double's stats, the simulated story jobs' own requests left out. So
 * that a change which makes every decision re-read everything again shows here
 * as a failing count, never as a slow test.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import {
  completeStory,
  dispatched,
  OWNER,
  planBody,
  REPO,
  restRequests,
  startApp,
  startEpic,
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
  it('spends at most 5 REST requests per finished story, 2 GraphQL requests and 4 creations per story over a 5-story epic', async () => {
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
    // jobs acting as another login find the same sub-issues and comments). 33 today.
    expect(atLabel).toBeLessThanOrEqual(33);
    // 10.6 per story here, the label's one-off costs spread over only 5 stories; the same
    // costs come to 7.9 per story over the 20-story epic of `npm run bench -- app`, whose
    // goal is 8 (about 55 per story when every decision re-read each record, walked every
    // merge and listed comments).
    expect((appRest() - rest0) / FIVE.length).toBeLessThanOrEqual(11);
    expect((sum(gh.stats.graphql) - graphql0) / FIVE.length).toBeLessThanOrEqual(2);
    expect((gh.stats.contentCreating - created0) / FIVE.length).toBeLessThanOrEqual(4);
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
  }, 180_000);
});
