import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;

beforeAll(async () => {
  w = await startWorld();
  w.gh.seed.user({ login: 'octocat', permission: 'write' });
  w.gh.seed.user({ login: 'stranger', permission: 'none' });
});
afterAll(async () => {
  w.gh.assertNoViolations();
  await w.gh.close();
});

/** REST calls of one operation so far. */
const calls = (operation: string): number => w.gh.stats.rest[operation] ?? 0;

function labelsOf(n: number): string[] {
  return [...(w.gh.state.issue(OWNER, REPO, n)?.labels ?? [])].sort();
}

describe('ensureIssueLabels', () => {
  it('adds and removes what is asked; again, it changes nothing and writes nothing', async () => {
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Story: form',
      labels: ['wip'],
    });
    const first = await w.repo.ensureIssueLabels(issue.number, {
      add: ['needs-docs'],
      remove: ['WIP'],
    });
    expect(first).toEqual({ added: ['needs-docs'], removed: ['wip'] });
    expect(labelsOf(issue.number)).toEqual(['needs-docs']);

    const adds = calls('issues/add-labels');
    const removes = calls('issues/remove-label');
    // An existing label added (any case), a missing one removed: both no-ops.
    const again = await w.repo.ensureIssueLabels(issue.number, {
      add: ['Needs-Docs'],
      remove: ['wip', 'never-there'],
    });
    expect(again).toEqual({ added: [], removed: [] });
    expect(labelsOf(issue.number)).toEqual(['needs-docs']);
    expect(calls('issues/add-labels')).toBe(adds);
    expect(calls('issues/remove-label')).toBe(removes);
  });

  it('sends nothing at all for empty lists (GitHub would read an empty list as "remove all")', async () => {
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Story: keep',
      labels: ['keep'],
    });
    const before = w.gh.stats.requests;
    expect(await w.repo.ensureIssueLabels(issue.number, { add: [], remove: [] })).toEqual({
      added: [],
      removed: [],
    });
    expect(w.gh.stats.requests).toBe(before);
    expect(labelsOf(issue.number)).toEqual(['keep']);
  });
});

describe('ensureAssignees', () => {
  it('assigns once, and says which login GitHub left out', async () => {
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Story: assign' });
    expect(await w.repo.ensureAssignees(issue.number, ['octocat', 'stranger'])).toEqual({
      assigned: ['octocat'],
      refused: ['stranger'],
    });
    expect(w.gh.state.issue(OWNER, REPO, issue.number)?.assignees).toEqual(['octocat']);
    const adds = calls('issues/add-assignees');
    expect(await w.repo.ensureAssignees(issue.number, ['OctoCat'])).toEqual({
      assigned: [],
      refused: [],
    });
    expect(calls('issues/add-assignees')).toBe(adds);
    expect(await w.repo.ensureAssignees(issue.number, [])).toEqual({ assigned: [], refused: [] });
    expect(w.gh.state.issue(OWNER, REPO, issue.number)?.assignees).toEqual(['octocat']);
  });
});
