/**
 * The App's side of planning, without running a job: an issue without a plan gets
 * the no-plan-block comment naming the planner option when none is configured; with
 * a planner, the label dispatches one planning job and a second label or a
 * redelivery none; `/plan` while one runs is answered; a planning run that died
 * before recording an outcome is marked failed, and `/plan` tries again.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import {
  botComments,
  dispatched,
  dispatchOf,
  OWNER,
  REPO,
  say,
  startApp,
  startEpic,
  writeConfig,
  type AppWorld,
} from './harness.js';

const PROSE = '# Search\n\nAdd a search box to the shop (`src/search`).\n';

const WITH_PLANNER = [
  'executors:',
  '  - id: coder',
  '    harness: command',
  '    command: [node, coder.mjs]',
  '  - id: thinker',
  '    harness: command',
  '    command: [node, planner.mjs]',
  '    roles: [planner]',
  '',
].join('\n');

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

async function planning(epic: number): Promise<{ attempt: number; status: string } | undefined> {
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  return (await store.readJson<{ attempt: number; status: string }>('planning'))?.value;
}

describe('an epic without a plan', () => {
  it('without a planner: the no-plan-block comment names the planner option; /plan says what it needs', async () => {
    const epic = await startEpic(w, 'Search', PROSE);
    expect(dispatched(w.gh, epic)).toEqual([]);
    const comment = botComments(w, epic).find((b) => b.includes('`no-plan-block`'));
    expect(comment).toContain('executors[].roles: [coder, planner]');
    await say(w, epic, '/plan');
    expect(botComments(w, epic).at(-1)).toContain('`/plan` needs a planner');
    expect(dispatched(w.gh, epic)).toEqual([]);
    expect(await planning(epic)).toBeUndefined();
  });

  it('with a planner: one planning job per attempt, whatever is redelivered or repeated', async () => {
    await writeConfig(w, WITH_PLANNER);
    const epic = await startEpic(w, 'Search', PROSE);
    expect(dispatched(w.gh, epic)).toEqual(['_plan#1']);
    expect(await planning(epic)).toMatchObject({ attempt: 1, status: 'active' });
    expect(botComments(w, epic).join('\n')).toContain("epicflow's planner is drafting a plan");

    // The label again, and /plan while the job runs: nothing more is dispatched.
    w.gh.act.unlabelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
    await w.gh.idle();
    await say(w, epic, '/plan smaller stories');
    expect(botComments(w, epic).at(-1)).toContain('already running for this epic (attempt 1)');
    expect(dispatched(w.gh, epic)).toEqual(['_plan#1']);

    // The job died before it could record anything: its run's end says so.
    const { runId } = dispatchOf(w.gh, epic, '_plan');
    w.gh.act.startWorkflowRun(runId);
    w.gh.act.completeWorkflowRun(runId, 'cancelled');
    await w.gh.idle();
    expect(await planning(epic)).toMatchObject({ attempt: 1, status: 'failed' });
    const failed = botComments(w, epic).find((b) => b.includes('could not draft a plan'));
    expect(failed).toContain('ended (cancelled) without recording an outcome');
    expect(failed).toContain('`/plan`');

    // A writer's /plan tries again: attempt 2, with the guidance on record.
    await say(w, epic, '/plan smaller stories');
    expect(dispatched(w.gh, epic)).toEqual(['_plan#1', '_plan#2']);
    expect(await planning(epic)).toMatchObject({
      attempt: 2,
      status: 'active',
      guidance: 'smaller stories',
    });
  });

  it('/plan by someone without write permission plans nothing', async () => {
    w.gh.seed.user({ login: 'rita', permission: 'read' });
    const epic = await startEpic(w, 'Search', PROSE);
    expect(dispatched(w.gh, epic)).toEqual(['_plan#1']);
    await say(w, epic, '/plan own .github/workflows', 'rita');
    expect(botComments(w, epic).at(-1)).toContain('only users with write permission');
    expect(dispatched(w.gh, epic)).toEqual(['_plan#1']);
    expect(await planning(epic)).toMatchObject({ attempt: 1 });
  });
});
