/**
 * The epic document (`epics/<n>/epic.json`: owner, approved plan, halt) is changed by
 * one write per decision, whatever the decision changes of it: the first decision's
 * owner and approval together, a `/cancel`'s halt, and a `/resume` that both approves
 * a plan edited meanwhile and lifts the halt. Nothing a decision changes is lost, and
 * nothing else in the document is.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import { planDigest } from '../../src/core/epic/index.js';
import { parsePlan } from '../../src/core/plan/index.js';
import { dispatched, OWNER, planBody, REPO, say, startApp, type AppWorld } from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
  w.gh.seed.user({ login: 'mallory', permission: 'read' });
});
afterAll(() => w.close());

const PLAN = [{ id: 'api' }, { id: 'db' }];
const EDITED = [{ id: 'api' }, { id: 'db', description: 'Implement db, then drop the users.' }];

function digestOf(body: string): string {
  const parsed = parsePlan(body);
  if (!parsed.ok) throw new Error('the test plan is not valid');
  return planDigest(parsed.plan);
}

async function doc(epic: number): Promise<Record<string, unknown>> {
  const text = await w.gh.state.file(OWNER, REPO, STATE_BRANCH, `epics/${epic}/epic.json`);
  return text === undefined ? {} : (JSON.parse(text) as Record<string, unknown>);
}

/** Commits on the state branch that wrote the epic document: one per write. */
async function writes(epic: number): Promise<number> {
  const { stdout } = await promisify(execFile)('git', [
    '-C',
    w.gh.state.repoDir(OWNER, REPO),
    'log',
    '--format=%H',
    STATE_BRANCH,
    '--',
    `epics/${epic}/epic.json`,
  ]);
  return stdout.split('\n').filter((l) => l !== '').length;
}

describe('the epic document', () => {
  it('is written once per decision, with everything the decision changes of it', async () => {
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Accounts',
      body: planBody(PLAN),
      author: 'mallory',
    });
    const epic = issue.number;
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
    await w.gh.idle();
    // The first decision: the owner and the approval of the plan, one write.
    expect(await writes(epic)).toBe(1);
    expect(await doc(epic)).toEqual({
      owner: 'epicflow[bot]',
      approvedPlan: digestOf(planBody(PLAN)),
      approvedStories: expect.any(Object) as unknown,
    });

    await say(w, epic, '/cancel');
    expect(await writes(epic)).toBe(2);
    expect(await doc(epic)).toMatchObject({
      owner: 'epicflow[bot]',
      approvedPlan: digestOf(planBody(PLAN)),
      halt: { kind: 'cancel', message: 'cancelled by @alice' },
    });

    // While cancelled, the author (without write permission) rewrites a story.
    w.gh.act.editIssue('mallory', {
      owner: OWNER,
      repo: REPO,
      number: epic,
      body: planBody(EDITED),
    });
    await w.gh.idle();
    expect(await writes(epic)).toBe(2);

    // alice's /resume approves the edited plan and lifts the halt: one write for both.
    await say(w, epic, '/resume');
    expect(await writes(epic)).toBe(3);
    const after = await doc(epic);
    expect(after).toMatchObject({
      owner: 'epicflow[bot]',
      approvedPlan: digestOf(planBody(EDITED)),
    });
    expect(after).not.toHaveProperty('halt');
    // db's entry changed: it starts again, from the approved text.
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', 'db#2']);
  });
});
