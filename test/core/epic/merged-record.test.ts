import { describe, expect, it } from '@jest/globals';
import { mergedRecord } from '../../../src/core/epic/index.js';
import type { StoryRecord } from '../../../src/core/model.js';

/**
 * A story killed after its merge was made and before its record said so (an earlier attempt
 * outgrew its time).
 */
const interrupted: StoryRecord = {
  version: 1,
  epic: 'e',
  story: 'a',
  planHash: 'h',
  status: 'active',
  branch: 'story/e/a',
  attempt: 1,
  executors: ['bot'],
  usage: [],
  notes: ['judge: fine'],
  reason: 'waiting for a slot',
  outgrown: 'timed-out',
  startedAt: '2026-12-03T00:00:00.000Z',
  timings: {},
  progress: { commit: 'c'.repeat(40), passed: 'judge' },
  tasks: [{ title: 'one', outcome: 'it works', paths: ['a.txt'], satisfies: [1], done: true }],
};
const MERGE = 'f'.repeat(40);

describe('a record once its merge is on the epic branch', () => {
  it('is done with that merge and keeps nothing of the way there for a later run to resume from', () => {
    const done = mergedRecord(interrupted, MERGE, '2026-12-03T01:00:00.000Z');
    expect(done).toMatchObject({
      status: 'done',
      mergeCommit: MERGE,
      finishedAt: '2026-12-03T01:00:00.000Z',
      notes: ['judge: fine'],
      executors: ['bot'],
    });
    for (const dropped of ['reason', 'progress', 'tasks', 'outgrown']) {
      expect(done).not.toHaveProperty(dropped);
    }
  });

  it('is the same record when it already says so', () => {
    const done = mergedRecord(interrupted, MERGE, undefined);
    expect(mergedRecord(done, MERGE, '2026-12-04T00:00:00.000Z')).toBe(done);
    expect(done).not.toHaveProperty('finishedAt');
  });
});
