/**
 * A story recorded active whose job never ran (the dispatch failed after the
 * record was written, or the process deciding died) or whose run ended without
 * the job writing an outcome fails, with a reason, and a command runs it again.
 */
import { describe, expect, it } from '@jest/globals';
import {
  DISPATCH_GRACE_MINUTES,
  overdueDispatches,
  strandedReason,
  type DispatchedRun,
} from '../../../src/core/epic/index.js';
import type { StoryRecord } from '../../../src/core/model.js';
import { buildPlan } from '../../../src/core/plan/index.js';
import { dispatches, NOW, recordsIn, story, World } from './world.js';

const minutes = (n: number): string => new Date(Date.parse(NOW) + n * 60_000).toISOString();

function active(id: string, startedAt: string, attempt = 1): StoryRecord {
  return {
    version: 1,
    epic: '12',
    story: id,
    planHash: 'h',
    status: 'active',
    branch: `story/12/${id}`,
    attempt,
    executors: [],
    usage: [],
    notes: [],
    timings: {},
    startedAt,
  };
}

describe('overdueDispatches', () => {
  it('names the active records dispatched longer than the grace period ago, and only those', () => {
    expect(DISPATCH_GRACE_MINUTES).toBe(15);
    const records: Record<string, StoryRecord> = {
      old: active('old', minutes(-16), 2),
      fresh: active('fresh', minutes(-14)),
      failed: { ...active('failed', minutes(-60)), status: 'failed' },
      done: { ...active('done', minutes(-60)), status: 'done' },
      waiting: { ...active('waiting', minutes(-60)), status: 'waiting' },
    };
    const { startedAt: _s, ...unstarted } = active('unstarted', minutes(-60));
    records['unstarted'] = unstarted;
    expect(overdueDispatches(records, NOW)).toEqual([
      { story: 'old', attempt: 2, dispatchedAt: minutes(-16) },
    ]);
  });
});

describe('strandedReason', () => {
  const record = active('api', minutes(-20), 2);
  it.each<[string, StoryRecord, DispatchedRun | undefined, string | undefined]>([
    [
      'no run of the attempt, past the grace period',
      record,
      { attempt: 2, kind: 'none' },
      'dispatched at 09:40 UTC but no run started within 15 minutes',
    ],
    [
      'no run yet, within the grace period',
      active('api', minutes(-10), 2),
      { attempt: 2, kind: 'none' },
      undefined,
    ],
    ['a run queued or in progress', record, { attempt: 2, kind: 'running' }, undefined],
    [
      'a run that ended',
      record,
      { attempt: 2, kind: 'ended', conclusion: 'cancelled' },
      'the job ended (cancelled) without recording an outcome',
    ],
    [
      'a run of an earlier attempt',
      record,
      { attempt: 1, kind: 'ended', conclusion: 'failure' },
      undefined,
    ],
    ['nothing looked up', record, undefined, undefined],
    [
      'a record that is not active any more',
      { ...record, status: 'done' },
      { attempt: 2, kind: 'none' },
      undefined,
    ],
  ])('%s', (_what, r, run, reason) => {
    expect(strandedReason(r, run, NOW)).toBe(reason);
  });

  it('names the day of a dispatch on another day', () => {
    const r = active('api', '2026-11-29T23:50:00.000Z');
    expect(strandedReason(r, { attempt: 1, kind: 'none' }, NOW)).toBe(
      'dispatched at 2026-11-29 23:50 UTC but no run started within 15 minutes',
    );
  });
});

describe('reconcile: a dispatched story that never ran', () => {
  /** a and e start on the label; twenty minutes later no run of a exists. */
  function strandedA(): World {
    const world = new World();
    world.step({ kind: 'label' });
    world.now = minutes(20);
    world.runs = { a: { attempt: 1, kind: 'none' }, e: { attempt: 1, kind: 'running' } };
    return world;
  }

  it('fails it with the reason on the next decision, comments on its sub-issue and starts nothing for it', () => {
    const world = strandedA();
    const actions = world.step({ kind: 'status' });
    expect(dispatches(actions)).toEqual([]);
    expect(world.recordOf('a')).toMatchObject({
      status: 'failed',
      attempt: 1,
      reason: 'dispatched at 10:00 UTC but no run started within 15 minutes',
      finishedAt: world.now,
    });
    // The story whose run exists is left running.
    expect(world.recordOf('e')).toMatchObject({ status: 'active', attempt: 1 });
    expect(world.comments.get('failure:a:1')).toContain('no run started within 15 minutes');
    expect(world.status()).toContain('/retry a');
  });

  it('restarts it on /resume with a new attempt, dispatched once however often /resume comes', () => {
    const world = strandedA();
    world.step({ kind: 'status' });
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 2, fresh: false },
    ]);
    expect(world.recordOf('a')).toMatchObject({
      status: 'active',
      attempt: 2,
      startedAt: world.now,
    });
    // The shell finds nothing overdue now: the new attempt was just dispatched.
    world.runs = {};
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([]);
    // Even a stale answer about attempt 1 changes nothing about attempt 2.
    world.runs = { a: { attempt: 1, kind: 'none' } };
    expect(recordsIn(world.step({ kind: 'resume', by: 'alice' }))).toEqual([]);
    expect(world.dispatched.filter((d) => d.story === 'a')).toEqual([
      { story: 'a', attempt: 1, fresh: true },
      { story: 'a', attempt: 2, fresh: false },
    ]);
  });

  it('restarts it in the same decision as the /resume that found it', () => {
    const world = strandedA();
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 2, fresh: false },
    ]);
  });

  it('gives its coder slot back, so a waiting story starts', () => {
    const world = new World(buildPlan([story('a'), story('b')]));
    world.coderSlots = 1;
    expect(dispatches(world.step({ kind: 'label' }))).toEqual([
      { story: 'a', attempt: 1, fresh: true },
    ]);
    world.now = minutes(20);
    world.runs = { a: { attempt: 1, kind: 'none' } };
    expect(dispatches(world.step({ kind: 'status' }))).toEqual([
      { story: 'b', attempt: 1, fresh: true },
    ]);
    expect(world.recordOf('a').status).toBe('failed');
  });

  it('fails a story whose run ended while its record still said running (the completion was missed)', () => {
    const world = strandedA();
    world.runs = { a: { attempt: 1, kind: 'ended', conclusion: 'cancelled' } };
    world.step({ kind: 'status' });
    expect(world.recordOf('a')).toMatchObject({
      status: 'failed',
      reason: 'the job ended (cancelled) without recording an outcome',
    });
  });

  it('leaves a story alone that merged meanwhile (the branch says done)', () => {
    const world = strandedA();
    world.merged.set('a', 'a000000123456789abcdef0123456789abcdef');
    world.step({ kind: 'status' });
    expect(world.recordOf('a').status).toBe('done');
  });
});
