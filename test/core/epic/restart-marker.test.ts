/**
 * The `restart` marker: the record a story job reads already carries the new
 * plan hash, so a started story whose plan entry changed is told to start
 * from the epic head by the marker, until a job honours it.
 */
import { describe, expect, it } from '@jest/globals';
import { buildPlan } from '../../../src/core/plan/index.js';
import { completed, dispatches, story, World } from './world.js';

function edit(world: World, id: string): void {
  world.plan = buildPlan(
    world.plan.stories.map((s) =>
      s.id === id ? { ...s, description: `${s.description} Now with tests.` } : s,
    ),
  );
}

/** a and e start on the label; a fails its first attempt. */
function failedA(): World {
  const world = new World();
  world.step({ kind: 'label' });
  world.jobFails('a', 'gates failed');
  world.step(completed('a'));
  return world;
}

describe('reconcile: restarting a started story whose plan entry changed', () => {
  it('marks the record and dispatches fresh, with the new hash and the next attempt', () => {
    const world = failedA();
    edit(world, 'a');
    expect(dispatches(world.step(world.bodyEdit()))).toEqual([]);
    expect(world.recordOf('a')).not.toHaveProperty('restart');

    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 2, fresh: true },
    ]);
    expect(world.recordOf('a')).toMatchObject({
      status: 'active',
      attempt: 2,
      planHash: world.plan.hashes['a'],
      startedAt: world.now,
      restart: 'fresh',
    });
  });

  it('marks a running story superseded on /resume', () => {
    const world = new World();
    world.step({ kind: 'label' });
    edit(world, 'a');
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 2, fresh: true },
    ]);
    expect(world.recordOf('a').restart).toBe('fresh');
  });

  it('does not mark a story that continues on its branch', () => {
    const world = failedA();
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 2, fresh: false },
    ]);
    expect(world.recordOf('a')).not.toHaveProperty('restart');
    expect(world.recordOf('e')).not.toHaveProperty('restart');
  });

  it('does not mark a story that never started, even when its entry changed', () => {
    const world = new World();
    world.coderSlots = 1;
    world.step({ kind: 'label' });
    world.halt = { kind: 'cancel', message: 'cancelled by @alice' };
    world.jobMerges('a');
    world.step(completed('a'));
    expect(world.recordOf('e')).toMatchObject({ status: 'waiting' });
    world.halt = undefined;
    world.coderSlots = Infinity;
    edit(world, 'e');
    const actions = world.step(world.bodyEdit());
    expect(dispatches(actions)).toContainEqual({ story: 'e', attempt: 1, fresh: true });
    expect(world.recordOf('e')).toMatchObject({ planHash: world.plan.hashes['e'] });
    expect(world.recordOf('e')).not.toHaveProperty('restart');
  });

  it('keeps the marker on the next /resume when the job died before honouring it', () => {
    const world = failedA();
    edit(world, 'a');
    world.step({ kind: 'resume', by: 'alice' });
    // The job was killed: its run ends without an outcome, the record still marked.
    world.step(completed('a', 2, 'cancelled'));
    expect(world.recordOf('a')).toMatchObject({ status: 'failed', restart: 'fresh' });

    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 3, fresh: true },
    ]);
    expect(world.recordOf('a')).toMatchObject({
      status: 'active',
      attempt: 3,
      planHash: world.plan.hashes['a'],
      restart: 'fresh',
    });
  });

  it('drops the marker once a job honoured it', () => {
    const world = failedA();
    edit(world, 'a');
    world.step({ kind: 'resume', by: 'alice' });
    // The job restarted from the epic head and saved its outcome without the marker.
    const { restart: _r, ...honoured } = world.recordOf('a');
    world.records['a'] = { ...honoured, status: 'failed', reason: 'gates failed' };
    world.step(completed('a', 2));

    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 3, fresh: false },
    ]);
    expect(world.recordOf('a')).not.toHaveProperty('restart');
  });

  it('marks a restart that was held before it could start', () => {
    const world = new World(buildPlan([story('x'), story('y')]), { concurrency: 1 });
    world.step({ kind: 'label' });
    world.jobFails('x', 'gates failed');
    expect(dispatches(world.step(completed('x')))).toEqual([
      { story: 'y', attempt: 1, fresh: true },
    ]);
    edit(world, 'x');
    // y still runs: x is restarted (a new attempt, not started yet) but must wait.
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([]);
    expect(world.recordOf('x')).toMatchObject({ status: 'planned', attempt: 2 });
    expect(world.recordOf('x')).not.toHaveProperty('startedAt');

    world.jobMerges('y');
    expect(dispatches(world.step(completed('y')))).toEqual([
      { story: 'x', attempt: 2, fresh: true },
    ]);
    expect(world.recordOf('x')).toMatchObject({
      status: 'active',
      attempt: 2,
      planHash: world.plan.hashes['x'],
      restart: 'fresh',
    });
  });
});
