/**
 * One reading of what a job of the story workflow is (a story's attempt, a planning
 * attempt, a landing), from its dispatch's ids and from its run's title, and one
 * decision whether it may still run.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  failIfOwned,
  freshRecord,
  jobInputs,
  jobRef,
  jobStaleness,
  jobTitle,
  ownsRecord,
  parseJobTitle,
  parseRunTitle,
  PLAN_APPROVAL_MISSING_MESSAGE,
  planApproval,
  planDigest,
  type JobFacts,
  type JobRef,
} from '../../../src/core/epic/index.js';
import { describeError } from '../../../src/core/errors.js';
import { buildPlan } from '../../../src/core/plan/index.js';
import { story } from './world.js';

describe('JobRef', () => {
  it.each<[string, JobRef]>([
    ['api', { kind: 'story', epic: 12, story: 'api', attempt: 3 }],
    ['_plan', { kind: 'plan', epic: 12, attempt: 3 }],
    ['land-2', { kind: 'land', epic: 12, job: 'land-2', attempt: 3 }],
    ['land-0', { kind: 'story', epic: 12, story: 'land-0', attempt: 3 }],
    ['landing', { kind: 'story', epic: 12, story: 'landing', attempt: 3 }],
  ])('the story id %s names its kind of job', (id, ref) => {
    expect(jobRef({ epic: 12, story: id, attempt: 3 })).toEqual(ref);
    expect(jobInputs(ref)).toEqual({ epic: '12', story: id, attempt: '3' });
  });

  it('titles each kind of job as the story workflow’s run-name does, and reads it back', () => {
    const refs: JobRef[] = [
      { kind: 'story', epic: 7, story: 'db', attempt: 2 },
      { kind: 'plan', epic: 7, attempt: 2 },
      { kind: 'land', epic: 7, job: 'land-1', attempt: 1 },
    ];
    expect(refs.map(jobTitle)).toEqual([
      'epicflow epic 7 story db attempt 2',
      'epicflow epic 7 story _plan attempt 2',
      'epicflow epic 7 story land-1 attempt 1',
    ]);
    for (const ref of refs) expect(parseJobTitle(jobTitle(ref))).toEqual(ref);
  });

  it('reads a title the way the story-run reader does, planning runs being its own kind', () => {
    const id = fc.oneof(
      fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,47}$/),
      fc.constantFrom('_plan', 'land-1', 'land-0', 'Api', 'my_api', '-x'),
    );
    const positive = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
    fc.assert(
      fc.property(positive, id, positive, (epic, story, attempt) => {
        const title = `epicflow epic ${epic} story ${story} attempt ${attempt}`;
        const job = parseJobTitle(title);
        const run = parseRunTitle(title);
        if (job?.kind === 'plan') expect(run).toBeNull();
        else expect(run).toEqual(job === null ? null : { epic, story, attempt });
      }),
    );
  });
});

describe('jobStaleness', () => {
  const plan = buildPlan([story('api'), story('ui', ['api'])]);
  const ref: JobRef = { kind: 'story', epic: 5, story: 'api', attempt: 2 };
  const facts = (over: Partial<Extract<JobFacts, { kind: 'story' }>> = {}): JobFacts => ({
    kind: 'story',
    record: { attempt: 2, status: 'active', planHash: plan.hashes['api'] ?? '' },
    entryHash: plan.hashes['api'],
    plan,
    approvedPlan: planDigest(plan),
    ...over,
  });
  const why = (f: JobFacts): string | undefined => {
    const e = jobStaleness(ref, f);
    return e === undefined ? undefined : describeError(e);
  };

  it('lets the dispatched attempt of an approved plan run', () => {
    expect(jobStaleness(ref, facts())).toBeUndefined();
  });

  it('refuses a story job whose approval is missing, as the decision holds the epic', () => {
    // What the decision says of this plan with no approval on file and nothing approving it.
    const held = planApproval({ plan, approvedPlan: undefined, trigger: { kind: 'status' } });
    expect(held).toMatchObject({ kind: 'hold', halt: { message: PLAN_APPROVAL_MISSING_MESSAGE } });
    const refused = jobStaleness(ref, facts({ approvedPlan: undefined }));
    expect(refused?.tag).toBe('plan');
    expect(refused?.message).toBe(`epic #5: ${PLAN_APPROVAL_MISSING_MESSAGE}`);
  });

  it('refuses a plan changed since it was approved, a newer attempt, an entry changed, a record not active', () => {
    expect(why(facts({ approvedPlan: '0123456789abcdef' }))).toContain(
      'the plan of epic #5 changed since a user with write permission approved it',
    );
    expect(why(facts({ record: undefined }))).toContain(
      'epic #5 has no record of story api: epicflow did not dispatch this job',
    );
    expect(why(facts({ record: { attempt: 3, status: 'active', planHash: '' } }))).toContain(
      'story api of epic #5 is at attempt 3, not 2: this job is stale',
    );
    expect(why(facts({ entryHash: 'other' }))).toContain(
      'the plan entry of story api changed since it was dispatched',
    );
    expect(
      why(facts({ record: { attempt: 2, status: 'done', planHash: plan.hashes['api'] ?? '' } })),
    ).toContain('story api of epic #5 is done, not active: nothing to run');
  });

  it('refuses a planning job or a landing whose record moved on', () => {
    const planning: JobRef = { kind: 'plan', epic: 5, attempt: 2 };
    expect(
      jobStaleness(planning, { kind: 'plan', record: { attempt: 2, status: 'active' } }),
    ).toBeUndefined();
    expect(
      describeError(
        jobStaleness(planning, { kind: 'plan', record: { attempt: 1, status: 'active' } }),
      ),
    ).toContain('planning of epic #5 is at attempt 1, not 2: this job is stale');
    const land: JobRef = { kind: 'land', epic: 5, job: 'land-1', attempt: 1 };
    expect(jobStaleness(land, { kind: 'land', record: { outcome: 'running' } })).toBeUndefined();
    expect(
      describeError(jobStaleness(land, { kind: 'land', record: { outcome: 'landed' } })),
    ).toContain('land-1 of epic #5 is landed, not running: this job is stale');
    expect(ownsRecord(land, { outcome: 'running' })).toBe(true);
    expect(ownsRecord(planning, { attempt: 2, status: 'failed' })).toBe(false);
  });
});

describe('freshRecord', () => {
  const retro: JobRef = { kind: 'retro', epic: 5, attempt: 2 };

  it('hands back what the job read of its record when it may run', () => {
    const facts: JobFacts = { kind: 'retro', record: { attempt: 2, status: 'active' } };
    expect(freshRecord(retro, facts, { sha: 'abc' })).toEqual({ sha: 'abc' });
  });

  it('throws why a stale job must not run, before looking at what it read', () => {
    const facts: JobFacts = { kind: 'retro', record: { attempt: 3, status: 'active' } };
    expect(() => freshRecord(retro, facts, { sha: 'abc' })).toThrow(
      'the retro of epic #5 is at attempt 3 (active), not 2: this job is stale',
    );
  });

  it('refuses, tagged internal, a record the staleness check saw and the job did not read', () => {
    const facts: JobFacts = { kind: 'retro', record: { attempt: 2, status: 'active' } };
    expect(() => freshRecord(retro, facts, undefined)).toThrow(
      expect.objectContaining({
        tag: 'internal',
        message: 'the retro of epic #5 passed the staleness check without a record',
      }),
    );
  });
});

describe('failIfOwned', () => {
  const planning: JobRef = { kind: 'plan', epic: 5, attempt: 2 };
  type Doc = { readonly attempt: number; readonly status: string; readonly reason?: string };
  const fail = (current: Doc): Doc => ({ ...current, status: 'failed', reason: 'refused' });

  it("fails the job's own record and says what it made of it", () => {
    const owned = failIfOwned<Doc>(planning, fail);
    const failed = { attempt: 2, status: 'failed', reason: 'refused' };
    expect(owned.change({ attempt: 2, status: 'active' })).toEqual(failed);
    expect(owned.failed()).toEqual(failed);
  });

  it('leaves a record that moved on as it is, and forgets an earlier call', () => {
    const owned = failIfOwned<Doc>(planning, fail);
    owned.change({ attempt: 2, status: 'active' });
    const newer = { attempt: 3, status: 'active' };
    expect(owned.change(newer)).toBe(newer);
    expect(owned.failed()).toBeUndefined();
    expect(owned.change(null)).toBeNull();
    expect(owned.failed()).toBeUndefined();
  });
});
