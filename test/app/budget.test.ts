/**
 * The App's GitHub request budget over a whole small epic (PRODUCT §9): counted
 * from the double's stats, the simulated story jobs' own requests left out. A
 * loose bound, so that a change which makes every decision re-read everything
 * again shows here as a failing count, never as a slow test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  completeStory,
  dispatched,
  planBody,
  restRequests,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterEach(() => w.gh.assertNoViolations());
afterAll(() => w.close());

const FIVE = [
  { id: 'api' },
  { id: 'db' },
  { id: 'ui', dependsOn: ['api'] },
  { id: 'sync', dependsOn: ['api', 'db'] },
  { id: 'docs', dependsOn: ['ui', 'sync'] },
];

describe('requests per story', () => {
  it('stays within 12 REST requests, 2 GraphQL requests and 4 creations per story over a 5-story epic', async () => {
    const { gh } = w;
    const sum = (o: Record<string, number>): number => Object.values(o).reduce((a, b) => a + b, 0);
    const rest0 = restRequests(gh);
    const graphql0 = sum(gh.stats.graphql);
    const created0 = gh.stats.contentCreating;
    const epic = await startEpic(w, 'Budget', planBody(FIVE));
    const done = new Set<string>();
    while (done.size < FIVE.length) {
      const next = dispatched(gh, epic).find((d) => !done.has(d));
      if (next === undefined) throw new Error(`nothing running after ${[...done].join(', ')}`);
      done.add(next);
      await completeStory(w, epic, next.split('#')[0] ?? '');
    }
    expect(dispatched(gh, epic)).toHaveLength(5);
    const app = restRequests(gh) - rest0 - w.jobRequests.rest;
    // 11.8 today (the label's one-off costs spread over 5 stories; about 55 when every
    // decision re-read each record, walked every merge and listed comments).
    expect(app / FIVE.length).toBeLessThanOrEqual(12);
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
  });
});
