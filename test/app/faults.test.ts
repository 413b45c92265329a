import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  botComments,
  completeStory,
  dispatched,
  OWNER,
  planBody,
  REPO,
  startApp,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp({ retries: true });
});
afterEach(() => {
  w.gh.faults.clear();
});
afterAll(() => w.close());

/** Routes the App uses on every decision; a share of their calls fail. */
const ROUTES = [
  'repos/get-content',
  'issues/list-comments',
  'issues/update-comment',
  'issues/create-comment',
  'issues/list-sub-issues',
  'issues/get',
  'git/get-ref',
  'git/get-commit',
  'pulls/list',
  'actions/create-workflow-dispatch',
  'repos/create-or-update-file-contents',
  'issues/create',
  'issues/add-sub-issue',
  'git/create-commit',
  'graphql:EpicflowEpicView',
];

/** About one call in ten fails with a 5xx or GitHub's secondary rate limit. */
function chaos(round: number): void {
  ROUTES.forEach((route, i) => {
    if ((i + round) % 2 === 0) w.gh.faults.add({ route, status: 502, times: 1 });
    else {
      w.gh.faults.add({
        route,
        status: 403,
        kind: 'secondary-rate-limit',
        retryAfterSeconds: 1,
        times: 1,
      });
    }
  });
}

describe('GitHub failing now and then, with retries on', () => {
  it('still delivers the epic, without duplicates', async () => {
    const { gh } = w;
    const plan = [{ id: 'api' }, { id: 'db' }, { id: 'ui', dependsOn: ['api', 'db'] }];
    const issue = gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Flaky',
      body: planBody(plan),
      author: 'alice',
    });
    const before = gh.stats.requests;
    chaos(0);
    gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: issue.number, label: 'epic' });
    await gh.idle();
    expect(dispatched(gh, issue.number)).toEqual(['api#1', 'db#1']);
    gh.faults.clear(); // the story job itself runs without faults
    await completeStory(w, issue.number, 'api', 1, () => chaos(1));
    gh.faults.clear(); // the story job itself runs without faults
    await completeStory(w, issue.number, 'db', 1, () => chaos(2));
    gh.faults.clear(); // the story job itself runs without faults
    await completeStory(w, issue.number, 'ui', 1, () => chaos(3));

    expect(dispatched(gh, issue.number)).toEqual(['api#1', 'db#1', 'ui#1']);
    expect(gh.state.issue(OWNER, REPO, issue.number)?.subIssueIds).toHaveLength(3);
    const status = botComments(w, issue.number);
    expect(status).toHaveLength(1);
    expect(status[0]).toContain('all 3 stories done');
    const pulls = gh.state.issues(OWNER, REPO).filter((i) => i.pull !== undefined);
    expect(pulls).toHaveLength(1);
    expect(pulls[0]?.pull?.draft).toBe(false);
    expect(botComments(w, pulls[0]?.number ?? 0)).toHaveLength(1);
    // The faults really were hit: 4 rounds of one per route.
    expect(gh.stats.requests - before).toBeGreaterThan(ROUTES.length * 4);
  });
});
