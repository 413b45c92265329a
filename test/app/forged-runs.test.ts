/**
 * A finished story run tells the App "story X, attempt N ended", and the App reads
 * X and N from the run's title. Anyone who can start a run can give it that title:
 * a pull request from a fork runs the fork's copy of the story workflow, a push to
 * another branch runs that branch's copy, another workflow file can carry the same
 * `run-name`. Each attack below completes such a run while the story is running:
 * before, the App took it for the story's own run and failed the story ("the job
 * ended without recording an outcome"). Now each is ignored, nothing is written,
 * and the genuine run still counts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import { handleEpicEvent, toEpicEvent } from '../../src/orchestrator/index.js';
import { octokitFor } from '../github-double/client.js';
import {
  botComments,
  dispatchOf,
  OWNER,
  planBody,
  readRecord,
  REPO,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
let epic: number;
const STORY_PATH = '.github/workflows/epicflow-story.yml';

beforeAll(async () => {
  w = await startApp({
    files: {
      // Another workflow of the repository, with the story workflow's run-name.
      '.github/workflows/other.yml': [
        'name: other',
        'run-name: epicflow epic ${{ inputs.epic }} story ${{ inputs.story }} attempt ${{ inputs.attempt }}',
        'on:',
        '  workflow_dispatch:',
        '    inputs:',
        '      epic: { type: string }',
        '      story: { type: string }',
        '      attempt: { type: string }',
        'jobs: {}',
        '',
      ].join('\n'),
    },
  });
  w.gh.seed.user({ login: 'mallory', permission: 'read' });
  await w.gh.seed.repo({ owner: 'mallory', name: REPO, forkOf: { owner: OWNER, repo: REPO } });
  epic = await startEpic(w, 'Checkout', planBody([{ id: 'api' }]));
});
afterAll(() => w.close());

/** What a forged run could have changed: the state branch, the comments, the App's dispatches. */
async function snapshot(): Promise<unknown> {
  return {
    state: await w.gh.state.ref(OWNER, REPO, STATE_BRANCH),
    comments: w.gh.state.comments(OWNER, REPO).map((c) => [c.id, c.body]),
    dispatched: w.gh.state
      .dispatches(OWNER, REPO)
      .filter((d) => d.actor === w.bot.login)
      .map((d) => d.runId),
    record: await readRecord(w, epic, 'api'),
  };
}

/** Completes the run, then hands its delivered payload to the orchestrator as the App does: the reason. */
async function completeAndExplain(runId: number): Promise<string | undefined> {
  w.gh.act.completeWorkflowRun(runId, 'success');
  await w.gh.idle();
  const delivery = w.gh.deliveries.find(
    (d) =>
      d.event === 'workflow_run' &&
      d.action === 'completed' &&
      (d.payload['workflow_run'] as { id: number }).id === runId,
  );
  const event = toEpicEvent('workflow_run', delivery?.payload);
  if (event === null) throw new Error('not a workflow_run.completed payload');
  const warnings: string[] = [];
  const log = { info: () => undefined, warn: (m: string) => warnings.push(m) };
  const result = await handleEpicEvent({ repo: w.repo, log }, event);
  expect(result.outcome).toBe('ignored');
  expect(result.dispatched).toEqual([]);
  return result.reason;
}

const TITLE = (): string => `epicflow epic ${epic} story api attempt 1`;

describe('workflow runs that only look like story runs', () => {
  it('a fork’s pull request running its copy of the story workflow is ignored', async () => {
    const before = await snapshot();
    const runId = await w.gh.act.triggerWorkflowRun('mallory', {
      owner: OWNER,
      repo: REPO,
      workflowPath: STORY_PATH,
      event: 'pull_request',
      // The fork's default branch has the same name as ours.
      headBranch: 'main',
      headRepository: { owner: 'mallory', repo: REPO },
      displayTitle: TITLE(),
    });
    const reason = await completeAndExplain(runId);
    expect(await snapshot()).toEqual(before);
    expect(reason).toBe(
      `run ${runId} titled "${TITLE()}" is not a story run epicflow dispatched: ` +
        'it was started by a "pull_request" event, not by a workflow_dispatch',
    );
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active', attempt: 1 });
  });

  it('a push to another branch with a copy of the story workflow is ignored', async () => {
    const octokit = octokitFor(w.gh, w.alice.token);
    const main = await w.gh.state.ref(OWNER, REPO, 'main');
    await octokit.rest.git.createRef({
      owner: OWNER,
      repo: REPO,
      ref: 'refs/heads/copy',
      sha: main ?? '',
    });
    const before = await snapshot();
    const runId = await w.gh.act.triggerWorkflowRun('alice', {
      owner: OWNER,
      repo: REPO,
      workflowPath: STORY_PATH,
      event: 'push',
      headBranch: 'copy',
      displayTitle: TITLE(),
    });
    const reason = await completeAndExplain(runId);
    expect(await snapshot()).toEqual(before);
    expect(reason).toContain('it was started by a "push" event, not by a workflow_dispatch');
  });

  it('a dispatch of the story workflow on another branch is ignored', async () => {
    const before = await snapshot();
    const octokit = octokitFor(w.gh, w.alice.token);
    await octokit.rest.actions.createWorkflowDispatch({
      owner: OWNER,
      repo: REPO,
      workflow_id: 'epicflow-story.yml',
      ref: 'copy',
      inputs: { epic: String(epic), story: 'api', attempt: '1' },
    });
    const run = w.gh.state
      .runs(OWNER, REPO)
      .find((r) => r.headBranch === 'copy' && r.event === 'workflow_dispatch');
    if (run === undefined) throw new Error('no run on copy');
    expect(run.displayTitle).toBe(TITLE());
    const reason = await completeAndExplain(run.id);
    expect(await snapshot()).toEqual(before);
    expect(reason).toContain('it ran from branch "copy", not from the default branch main');
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active', attempt: 1 });
  });

  it('a dispatch of another workflow file with the story workflow’s run-name is ignored', async () => {
    const octokit = octokitFor(w.gh, w.alice.token);
    await octokit.rest.actions.createWorkflowDispatch({
      owner: OWNER,
      repo: REPO,
      workflow_id: 'other.yml',
      ref: 'main',
      inputs: { epic: String(epic), story: 'api', attempt: '1' },
    });
    const run = w.gh.state.runs(OWNER, REPO).find((r) => r.workflowPath.endsWith('/other.yml'));
    if (run === undefined) throw new Error('no run of other.yml');
    expect(run.displayTitle).toBe(TITLE());
    const before = await snapshot();
    const reason = await completeAndExplain(run.id);
    expect(await snapshot()).toEqual(before);
    expect(reason).toBe('not the story workflow');
  });

  it('the genuine run of the story still counts', async () => {
    // The job is cancelled before it records anything: the App hears of its run and says so.
    const { runId } = dispatchOf(w.gh, epic, 'api');
    expect(w.gh.state.runs(OWNER, REPO).find((r) => r.id === runId)?.actor).toBe(w.bot.login);
    w.gh.act.completeWorkflowRun(runId, 'cancelled');
    await w.gh.idle();
    expect(await readRecord(w, epic, 'api')).toMatchObject({
      status: 'failed',
      reason: 'the job ended (cancelled) without recording an outcome',
    });
    expect(botComments(w, epic).join('\n')).toContain('`api` failed');
    // The App dispatched nothing else (the other dispatches above were alice's).
    const ours = w.gh.state.dispatches(OWNER, REPO).filter((d) => d.actor === w.bot.login);
    expect(ours.map((d) => `${String(d.inputs['story'])}#${String(d.inputs['attempt'])}`)).toEqual([
      'api#1',
    ]);
  });
});
