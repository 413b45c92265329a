/**
 * A planning attempt runs as two jobs of one workflow run: the work job (the planner, with a
 * token that can only read) hands its outcome over as text; the publish job (the write
 * credential, no checkout) checks it again and writes it. Here the hand-over is what an
 * agent that escaped the work job's sandbox could make of it: a plan section that is not a
 * valid plan, the publish job's own token in a note, nothing at all; and a workflow that
 * still plans in one job. Each is refused with the reason on the planning record, and the
 * issue body is left as the author wrote it. One planning work job is run; each test publishes
 * a copy of its hand-over, the planning record as the work job left it again (active).
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { commentsOn, startEpic } from '../app/harness.js';
import { startAppActionWorld, type AppActionWorld } from './support/app-world.js';
import { planningConfig, PROSE } from './support/planning.js';
import {
  checkout,
  dispatchOf,
  dispatched,
  runStep,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';

let world: AppActionWorld;
let w: ActionWorld;
let bundle: string;
/** The hand-overs copied for the tests. */
const copies: string[] = [];

/** The planning work job of a new epic: its hand-over's folder and the epic. */
async function drafted(title: string): Promise<{ epic: number; result: string; work: JobRun }> {
  const epic = await startEpic(world.app, title, PROSE);
  const { runId } = dispatchOf(w, epic, '_plan');
  const name = `${epic}-plan-work`;
  const work = await runStep(w, bundle, {
    name,
    workspace: await checkout(w, name),
    inputs: { ...storyInputs(w, epic, '_plan'), phase: 'work' },
    runId,
  });
  expect(work.code).toBe(0);
  expect(work.outputs['status']).toBe('planned');
  return { epic, result: work.outputs['result'] ?? '', work };
}

let publishes = 0;
async function publish(epic: number, result: string): Promise<JobRun> {
  const name = `${epic}-publish-${++publishes}`;
  return runStep(w, bundle, {
    name,
    workspace: await checkout(w, name),
    inputs: {
      ...storyInputs(w, epic, '_plan'),
      phase: 'publish',
      result,
      'work-outcome': 'success',
    },
    runId: dispatchOf(w, epic, '_plan').runId,
  });
}

function storeOf(epic: number): GitHubStateStore {
  return new GitHubStateStore({ repo: w.repo, epic: String(epic) });
}

async function planning(epic: number): Promise<{ status: string; problems?: string[] }> {
  const read = await storeOf(epic).readJson<{ status: string; problems?: string[] }>('planning');
  if (read === null) throw new Error('no planning record');
  return read.value;
}

async function editHandover(result: string, edit: (h: Record<string, unknown>) => void) {
  const file = join(result, 'result.json');
  const handover = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  edit(handover);
  await writeFile(file, JSON.stringify(handover));
}

let fixture: { epic: number; result: string };
/** What the work job left: the issue body, and planning.json (active) as text. */
let left: { body: string | null | undefined; planning: string };
beforeAll(async () => {
  world = await startAppActionWorld('plan-publish', planningConfig);
  ({ w, bundle } = world);
  const { epic, result } = await drafted('Checkout');
  fixture = { epic, result };
  left = {
    body: (await w.repo.getIssue(epic)).body,
    planning: JSON.stringify((await storeOf(epic).readJson<unknown>('planning'))?.value),
  };
}, 400_000);
afterAll(async () => {
  await world.close();
  for (const dir of copies) await rm(dir, { recursive: true, force: true });
});

/** The work job's hand-over, copied for one test to publish; planning.json active again. */
async function handedOver(): Promise<{ epic: number; result: string }> {
  const { epic } = fixture;
  const store = storeOf(epic);
  const now = await store.readJson<unknown>('planning');
  await store.writeJson('planning', JSON.parse(left.planning) as unknown, now?.sha ?? null);
  const result = await mkdtemp(join(tmpdir(), 'epicflow-plan-result-'));
  copies.push(result);
  await cp(fixture.result, result, { recursive: true });
  return { epic, result };
}

describe('the publish job of a planning attempt refuses a hand-over it cannot trust', () => {
  it('the work job writes nothing: the body as the author wrote it, the record active', () => {
    expect(left.body).toBe(PROSE);
    expect(JSON.parse(left.planning)).toMatchObject({ status: 'active' });
  });

  it('a plan section that is not a valid plan: refused by the validator, nothing written', async () => {
    const { epic, result } = await handedOver();
    await editHandover(result, (h) => {
      const outcome = h['outcome'] as { section: string };
      // A story that depends on one the plan does not have.
      const forged = outcome.section.replace(/dependsOn: \[[^\]]*\]/, 'dependsOn: [ghost]');
      expect(forged).not.toBe(outcome.section);
      outcome.section = forged;
    });
    const job = await publish(epic, result);
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain("the planning work job's plan section is not a valid plan");
    expect(await planning(epic)).toMatchObject({ status: 'failed' });
    expect((await planning(epic)).problems?.join(' ')).toContain('not a valid plan');
    expect((await w.repo.getIssue(epic)).body).toBe(PROSE);
    expect(dispatched(w, epic)).toEqual(['_plan#1']);
  }, 300_000);

  it("the publish job's own token in a note: refused, the token written nowhere", async () => {
    const { epic, result } = await handedOver();
    await editHandover(result, (h) => {
      h['notes'] = [`found it: ${w.bot.token}`];
    });
    const job = await publish(epic, result);
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain('holds a credential: nothing of it was written');
    expect(job.summary).toContain('note 1: a secret of the publish job');
    expect(job.summary).not.toContain(w.bot.token);
    expect(await planning(epic)).toMatchObject({ status: 'failed' });
    expect((await w.repo.getIssue(epic)).body).toBe(PROSE);
    for (const c of commentsOn(w.gh, epic)) expect(c.body).not.toContain(w.bot.token);
  }, 300_000);

  it('a hand-over of another attempt, and none at all: refused with the reason', async () => {
    const { epic, result } = await handedOver();
    await editHandover(result, (h) => {
      h['attempt'] = 2;
    });
    const other = await publish(epic, result);
    expect(other.code).not.toBe(0);
    expect(other.summary).toContain('field attempt is 2, expected 1');

    const none = await startEpic(world.app, 'Cancelled', PROSE);
    const job = await runStep(w, bundle, {
      name: `${none}-publish`,
      workspace: await checkout(w, `${none}-publish`),
      inputs: {
        ...storyInputs(w, none, '_plan'),
        phase: 'publish',
        result: join(w.dir, 'nothing-here'),
        'work-outcome': 'cancelled',
      },
      runId: dispatchOf(w, none, '_plan').runId,
    });
    expect(job.code).not.toBe(0);
    expect((await planning(none)).problems?.[0]).toContain(
      'the work job handed over no result (it ended: cancelled)',
    );
    expect((await w.repo.getIssue(none)).body).toBe(PROSE);
  }, 300_000);

  it('a workflow that still plans in one job: refused before the planner runs, saying what to update', async () => {
    const epic = await startEpic(world.app, 'One job', PROSE);
    const name = `${epic}-one-job`;
    const job = await runStep(w, bundle, {
      name,
      workspace: await checkout(w, name),
      inputs: storyInputs(w, epic, '_plan'),
      runId: dispatchOf(w, epic, '_plan').runId,
    });
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain('runs it in one job, with the write credential beside the agent');
    expect((await planning(epic)).problems?.[0]).toContain('epicflow init --force');
    expect((await w.repo.getIssue(epic)).body).toBe(PROSE);
  }, 300_000);

  // Last: it writes the plan into the body the refusals above find as the author wrote it.
  it('writes a valid hand-over: the plan in the body, the record proposed', async () => {
    const { epic, result } = await handedOver();
    const job = await publish(epic, result);
    expect(job.code).toBe(0);
    expect(job.summary).toContain('plan proposed: 2 stories');
    expect((await w.repo.getIssue(epic)).body).toContain('```epicflow');
    expect((await planning(epic)).status).toBe('proposed');
  }, 300_000);
});
