/**
 * The publish job's side of `issueTools`: it never trusts the work job's filtering. A record
 * that asks for more than the configuration allows (as a work job an agent escaped from could
 * hand over) gets only what the publish job's own configuration allows, on the story's own
 * sub-issue; a story with no sub-issue or not merged gets nothing applied, and says so.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../src/core/config/index.js';
import { applyIssueRequests } from '../../src/jobs/github/issue-requests.js';
import { record } from '../core/report/fixtures.js';
import { OWNER, REPO, startWorld, type World } from '../adapters/github/setup.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
  w.gh.seed.user({ login: 'octocat', permission: 'write' });
  w.gh.seed.user({ login: 'mallory', permission: 'write' });
});
afterAll(async () => {
  w.gh.assertNoViolations();
  await w.gh.close();
});

/** The REST operations that change an issue's labels or assignees. */
const WRITES = ['issues/add-labels', 'issues/remove-label', 'issues/add-assignees'];

const allow = { labels: ['needs-docs'], assignees: ['octocat'] };
const forged = {
  addLabels: ['needs-docs', 'epic'],
  removeLabels: ['epic'],
  assignees: ['octocat', 'mallory'],
};

describe('applyIssueRequests', () => {
  it('decides again from its own configuration: a forged request for the epic label or another login is dropped', async () => {
    const sub = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Story: cart',
      labels: ['epic'],
    });
    const events: string[] = [];
    const out = await applyIssueRequests(
      w.repo,
      allow,
      sub.number,
      record('cart', 'done', { mergeCommit: 'a'.repeat(40), issueRequests: forged }),
      (m) => events.push(m),
    );
    const issue = w.gh.state.issue(OWNER, REPO, sub.number);
    expect([...(issue?.labels ?? [])].sort()).toEqual(['epic', 'needs-docs']);
    expect(issue?.assignees).toEqual(['octocat']);
    expect(out.notes).toEqual([
      'publish job: issue tools: dropped the request to add the label "epic": it is not in issueTools.labels (needs-docs)',
      'publish job: issue tools: dropped the request to remove the label "epic": it is not in issueTools.labels (needs-docs)',
      'publish job: issue tools: dropped the request to assign "mallory": it is not in issueTools.assignees (octocat)',
      `issue tools: #${sub.number} labelled needs-docs, assigned octocat`,
    ]);
    expect(events).toEqual(out.notes);

    // Published again (a re-run): nothing changes, nothing is written.
    const writes = WRITES.map((op) => w.gh.stats.rest[op] ?? 0);
    const again = await applyIssueRequests(
      w.repo,
      allow,
      sub.number,
      record('cart', 'done', { mergeCommit: 'a'.repeat(40), issueRequests: forged }),
      () => undefined,
    );
    expect(again.notes.at(-1)).toBe(`issue tools: #${sub.number} already as asked`);
    expect(WRITES.map((op) => w.gh.stats.rest[op] ?? 0)).toEqual(writes);
    // The first application wrote its label and its assignee (and removed nothing).
    expect(writes).toEqual([1, 0, 1]);
  });

  it('with issueTools left out of its configuration, applies nothing: the epic label, or any other, never reaches an issue', async () => {
    const sub = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Story: pay' });
    const off = parseConfig('', 'epicflow.yml').issueTools;
    const writes = WRITES.map((op) => w.gh.stats.rest[op] ?? 0);
    const out = await applyIssueRequests(
      w.repo,
      off,
      sub.number,
      record('pay', 'done', { mergeCommit: 'd'.repeat(40), issueRequests: forged }),
      () => undefined,
    );
    const issue = w.gh.state.issue(OWNER, REPO, sub.number);
    expect(issue?.labels).toEqual([]);
    expect(issue?.assignees).toEqual([]);
    expect(WRITES.map((op) => w.gh.stats.rest[op] ?? 0)).toEqual(writes);
    expect(out.notes).toEqual(
      expect.arrayContaining([
        'publish job: issue tools: dropped the request to add the label "epic": issueTools.labels is empty',
        'publish job: issue tools: dropped the request to assign "octocat": issueTools.assignees is empty',
      ]),
    );
  });

  it('applies nothing to a story without a sub-issue, or not merged, and says why', async () => {
    const requests = { addLabels: ['needs-docs'], removeLabels: [], assignees: [] };
    const before = w.gh.stats.requests;
    const none = await applyIssueRequests(
      w.repo,
      allow,
      undefined,
      record('review-1', 'done', { mergeCommit: 'b'.repeat(40), issueRequests: requests }),
      () => undefined,
    );
    expect(none.notes).toEqual(['issue tools: nothing applied, the story has no sub-issue']);
    const failed = await applyIssueRequests(
      w.repo,
      allow,
      1,
      record('cart', 'failed', { issueRequests: requests }),
      () => undefined,
    );
    expect(failed.notes).toEqual(['issue tools: nothing applied, the story was not merged']);
    const nothing = record('cart', 'done', { mergeCommit: 'c'.repeat(40) });
    expect(await applyIssueRequests(w.repo, allow, 1, nothing, () => undefined)).toBe(nothing);
    expect(w.gh.stats.requests).toBe(before);
  });
});
