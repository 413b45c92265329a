/**
 * When the App answers a delivery: by default as soon as it is verified and
 * queued (the work follows, one epic at a time); with `sync` only after acting,
 * so a failure answers 500 and GitHub can redeliver it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Delivery, GitHubDouble } from '../github-double/index.js';
import { dispatched, OWNER, planBody, REPO, startApp, type AppWorld } from './harness.js';

let w: AppWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const TWO = [{ id: 'api' }, { id: 'ui', dependsOn: ['api'] }];

/** Labels a new epic issue and resolves with the delivery once the App answered it. */
async function labelAndAwaitAnswer(gh: GitHubDouble): Promise<{ number: number; d: Delivery }> {
  const issue = gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Ack', body: planBody(TWO) });
  const before = gh.deliveries.length;
  gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: issue.number, label: 'epic' });
  for (;;) {
    const d = gh.deliveries.slice(before).find((x) => x.event === 'issues');
    if (d?.status !== undefined) return { number: issue.number, d };
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('answering deliveries', () => {
  it('in sync mode answers after acting, and answers 500 when acting failed', async () => {
    w = await startApp({ sync: true });
    const first = await labelAndAwaitAnswer(w.gh);
    expect(first.d.status).toBe(200);
    // Already dispatched when the answer came.
    expect(dispatched(w.gh, first.number)).toEqual(['api#1']);
    await w.gh.idle();

    w.gh.faults.add({ route: 'graphql:EpicflowEpicView', status: 502, times: 1 });
    // Logged by the App, and by probot for the delivery it answers 500.
    w.expectError(/cannot read the state of epics\/\d+ .*HTTP 502/);
    const failed = await labelAndAwaitAnswer(w.gh);
    expect(failed.d.status).toBe(500);
    expect(dispatched(w.gh, failed.number)).toEqual([]);
    // GitHub's "Redeliver": the same delivery id, handled this time.
    await w.gh.redeliver(failed.d.id);
    expect(failed.d.status).toBe(200);
    expect(dispatched(w.gh, failed.number)).toEqual(['api#1']);
  });

  it('by default answers 200 at once, even when acting fails; the next event recovers', async () => {
    w = await startApp();
    w.gh.faults.add({ route: 'graphql:EpicflowEpicView', status: 502, times: 1 });
    w.expectError('github');
    const failed = await labelAndAwaitAnswer(w.gh);
    expect(failed.d.status).toBe(200);
    await w.gh.idle();
    expect(dispatched(w.gh, failed.number)).toEqual([]);
    w.gh.act.comment('alice', { owner: OWNER, repo: REPO, number: failed.number, body: '/resume' });
    await w.gh.idle();
    expect(dispatched(w.gh, failed.number)).toEqual(['api#1']);
    expect(w.gh.deliveries.filter((d) => d.status !== 200)).toEqual([]);
  });
});
