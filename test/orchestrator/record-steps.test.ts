/**
 * The steps the job shell runs on a job's record for every kind (src/jobs/github/job-record.ts),
 * called in-process as the Action's shell calls them, against the GitHub double: a stale job
 * is refused before its kind prepares anything, and a lost compare-and-swap on the record's
 * save means what the kind declares — a planning attempt is superseded (nothing more is
 * written), a story's record is written again on the record GitHub has now (a newer
 * attempt's kept).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import type { StoryRecord } from '../../src/core/model.js';
import { HANDOVER_VERSION, type PlanHandover } from '../../src/core/publish/handover.js';
import { prepareJob, preparation, saveRecord } from '../../src/jobs/github/job-record.js';
import { planningRecord, type PlanJobInput } from '../../src/jobs/github/plan-job.js';
import { publishPlanJob } from '../../src/jobs/github/plan-publish.js';
import { planningConfig, PROSE } from '../action/support/planning.js';
import {
  OWNER,
  planBody,
  REPO,
  startEpic,
  startWorld,
  type ActionWorld,
} from '../action/support/world.js';
import { CONFIG_PATH, publishJob, refusal, workInput } from './support/story-jobs.js';

describe('a planning attempt: a stale job refused first, a lost save superseded', () => {
  let w: ActionWorld;
  beforeAll(async () => {
    w = await startWorld({ config: planningConfig });
  });
  afterAll(async () => {
    await w.close();
  });

  async function planInput(epic: number, attempt: number): Promise<PlanJobInput> {
    const folder = join(w.dir, 'jobs', `plan-${epic}-${attempt}`);
    await mkdir(folder, { recursive: true });
    return {
      epic,
      attempt,
      configPath: CONFIG_PATH,
      repo: w.repo,
      workspace: folder,
      tempDir: folder,
      env: process.env,
      scrubbed: [],
    };
  }

  const prepare = async (epic: number, attempt: number) =>
    prepareJob(
      { kind: 'plan', epic, attempt },
      preparation(await planInput(epic, attempt), planningRecord),
    );

  function failed(epic: number): PlanHandover {
    return {
      version: HANDOVER_VERSION,
      job: 'plan',
      epic: String(epic),
      attempt: 1,
      rounds: 1,
      executors: ['planner'],
      usage: [],
      notes: [],
      outcome: { kind: 'failed', reason: 'the planner gave up' },
    };
  }

  const planning = async (epic: number) =>
    (
      await new GitHubStateStore({ repo: w.repo, epic: String(epic) }).readJson<{
        attempt: number;
        status: string;
      }>('planning')
    )?.value;

  it("a stale job is refused before the kind's own checks run", async () => {
    const epic = await startEpic(w, PROSE);
    expect(await planning(epic)).toMatchObject({ attempt: 1, status: 'active' });
    // A plan block in the author's text: the kind's own preparation refuses it...
    const issue = w.gh.state.issue(OWNER, REPO, epic);
    if (issue === undefined) throw new Error('no epic issue');
    issue.body = `${PROSE}\n${planBody([{ id: 'cart' }])}`;
    expect(await refusal(prepare(epic, 1))).toContain(
      `epic #${epic} holds a plan written outside the plan section`,
    );
    // ...but a job of another attempt is refused as stale before it gets there.
    const why = await refusal(prepare(epic, 2));
    expect(why).toContain(`planning of epic #${epic} is at attempt 1, not 2: this job is stale`);
    expect(why).not.toContain('outside the plan section');
    // Nothing of the epic moved: the record keeps its attempt, the body what its author wrote.
    expect(await planning(epic)).toMatchObject({ attempt: 1, status: 'active' });
    expect(w.gh.state.issue(OWNER, REPO, epic)?.body).toBe(
      `${PROSE}\n${planBody([{ id: 'cart' }])}`,
    );
  });

  it('the record saved: the outcome written, and the comment after it', async () => {
    const epic = await startEpic(w, PROSE);
    const prepared = await prepare(epic, 1);
    const ending = await publishPlanJob(await planInput(epic, 1), prepared, failed(epic));
    const saved = await saveRecord(ending, planningRecord.lostSave);
    expect(saved.superseded).toBe(false);
    expect(await planning(epic)).toMatchObject({ attempt: 1, status: 'failed' });
    const comments = w.gh.state.comments(OWNER, REPO, epic).map((c) => c.body);
    expect(comments.join('\n')).toContain('the planner gave up');
  });

  it('a newer attempt took the record over: superseded, nothing more written', async () => {
    const epic = await startEpic(w, PROSE);
    const prepared = await prepare(epic, 1);
    // A `/plan` meanwhile: the record is the next attempt's.
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const read = await store.readJson<Record<string, unknown>>('planning');
    if (read === null) throw new Error('no planning record');
    expect((await store.writeJson('planning', { ...read.value, attempt: 2 }, read.sha)).ok).toBe(
      true,
    );
    const comments = w.gh.state.comments(OWNER, REPO, epic).length;
    const ending = await publishPlanJob(await planInput(epic, 1), prepared, failed(epic));
    const saved = await saveRecord(ending, planningRecord.lostSave);
    expect(saved.superseded).toBe(true);
    expect(await planning(epic)).toMatchObject({ attempt: 2, status: 'active' });
    expect(w.gh.state.comments(OWNER, REPO, epic)).toHaveLength(comments);
  });
});

describe("a story's lost save is made again on the record as GitHub has it", () => {
  let w: ActionWorld;
  beforeAll(async () => {
    w = await startWorld();
  });
  afterAll(async () => {
    await w.close();
  });

  /** The story's record on GitHub. */
  async function record(epic: number): Promise<{ record: StoryRecord; sha: string }> {
    const read = await new GitHubStateStore({ repo: w.repo, epic: String(epic) }).read('cart');
    if (read === null) throw new Error('no record of cart');
    return read;
  }

  /** Writes `change` of the record over it, as another writer would. */
  async function meanwhile(epic: number, change: (r: StoryRecord) => StoryRecord): Promise<void> {
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const { record: current, sha } = await record(epic);
    expect((await store.write(change(current), sha)).ok).toBe(true);
  }

  it("the record moved on the same attempt: this job's outcome written over it", async () => {
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    // No work job ran: its result is missing, and the publish job fails the story.
    const work = await workInput(w, epic, 'cart', { name: 'moved' });
    const published = await publishJob(w, work, undefined, () =>
      meanwhile(epic, (r) => ({ ...r, notes: [...r.notes, 'written meanwhile'] })),
    );
    expect(published.record.status).toBe('failed');
    const onGitHub = (await record(epic)).record;
    expect(onGitHub.status).toBe('failed');
    expect(onGitHub.reason).toContain("the publish job refused the work job's result");
  });

  it("a newer attempt's record: kept as it is, and reported", async () => {
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    const work = await workInput(w, epic, 'cart', { name: 'newer' });
    const published = await publishJob(w, work, undefined, () =>
      meanwhile(epic, (r) => ({ ...r, attempt: 2 })),
    );
    expect(published.record).toMatchObject({ attempt: 2, status: 'active' });
    expect((await record(epic)).record).toMatchObject({ attempt: 2, status: 'active' });
  });
});
