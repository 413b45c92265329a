/**
 * The follow-up round over deferred findings in the one epic state machine: offered once
 * every story is done, started by a `deferred` trigger (`/resume deferred`, `epicflow run
 * --deferred`), each story's earlier merge not counting as done while its round runs.
 */
import { describe, expect, it } from '@jest/globals';
import { buildPlan } from '../../../src/core/plan/index.js';
import { completed, dispatches, kinds, story, World } from './world.js';

/** Two independent stories, both merged; `a` with deferred findings. */
function finished(): World {
  const world = new World(buildPlan([story('a'), story('b')]));
  world.step({ kind: 'label' });
  world.jobMerges('a');
  world.jobMerges('b');
  world.records['a'] = {
    ...world.recordOf('a'),
    deferred: ['minor: rename x', 'major: @bob asked for a test of []'],
  };
  world.step(completed('a'));
  return world;
}

describe('the follow-up round over deferred findings', () => {
  it('is offered once every story is done, with the findings listed and mentions inert', () => {
    const world = finished();
    const report = world.comments.get('report') ?? '';
    expect(report).toContain('## Deferred');
    expect(report).toContain('  - minor: rename x');
    // A mention in a finding (the judge's text) notifies nobody: it is set in code.
    expect(report).toContain('  - major: `@bob` asked for a test of []');
    expect(report).toContain(
      '2 deferred findings on `a` (listed under Deferred). Comment `/resume deferred` for one follow-up round over them',
    );
    expect(world.status()).toContain('Comment `/resume deferred`');
    expect(world.finished).toBe(true);
  });

  it('starts on `deferred`: a new attempt of the story on its branch, its merge not done meanwhile', () => {
    const world = finished();
    const actions = world.step({ kind: 'deferred', by: 'alice' });
    expect(dispatches(actions)).toEqual([{ story: 'a', attempt: 2, fresh: false }]);
    expect(world.recordOf('a')).toMatchObject({
      status: 'active',
      attempt: 2,
      deferredRound: {
        findings: ['minor: rename x', 'major: @bob asked for a test of []'],
        supersedes: world.merged.get('a'),
      },
    });
    expect(world.recordOf('a').deferred).toBeUndefined();
    expect(world.replies.at(-1)).toBe(
      'Follow-up round started by @alice: 2 deferred findings on `a` (each story once more on its branch, then its gates, the judge and the merge).',
    );
    // The old merge is still on the branch, but the story is not done until it merges again.
    expect(kinds(world.step({ kind: 'status' }))).not.toContain('finish');
    world.jobFails('a', 'gates failed: npm test');
    world.step(completed('a', 2, 'failure'));
    expect(world.comments.get('report')).toMatch(/\| `a` Story a \| failed \|/);
    // Retried like any failed story, still in its round.
    world.step({ kind: 'retry', story: 'a', by: 'alice' });
    expect(world.recordOf('a')).toMatchObject({ status: 'active', attempt: 3 });
    world.jobMerges('a', 'f'.repeat(40));
    const done = world.step(completed('a', 3));
    expect(kinds(done)).toContain('finish');
    expect(world.comments.get('report')).toContain('follow-up round over 2 deferred findings');
    // One round per story: nothing left to offer or start.
    expect(world.comments.get('report')).not.toContain('/resume deferred');
    expect(dispatches(world.step({ kind: 'deferred', by: 'alice' }))).toEqual([]);
    expect(world.replies.at(-1)).toBe(
      'No follow-up round: no story has deferred findings left to follow up.',
    );
  });

  it('starts nothing before every story is done, and says why', () => {
    const world = new World(buildPlan([story('a'), story('b')]));
    world.step({ kind: 'label' });
    world.jobMerges('a');
    world.records['a'] = { ...world.recordOf('a'), deferred: ['minor: rename x'] };
    world.step(completed('a'));
    const actions = world.step({ kind: 'deferred', by: 'alice' });
    expect(dispatches(actions)).toEqual([]);
    expect(world.recordOf('a').deferredRound).toBeUndefined();
    expect(world.replies.at(-1)).toBe(
      'No follow-up round: the epic is not finished (`b` not done). Deferred findings are followed up once every story is done.',
    );
    expect(world.comments.get('report')).not.toContain('/resume deferred');
  });
});
