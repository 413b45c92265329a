import { describe, expect, it } from '@jest/globals';
import { verifiedRecord } from '../../../src/core/epic/index.js';
import type { StoryRecord } from '../../../src/core/model.js';

const done: StoryRecord = {
  version: 1,
  epic: 'e',
  story: 'a',
  planHash: 'h',
  status: 'done',
  branch: 'story/e/a',
  attempt: 1,
  executors: ['bot'],
  usage: [],
  notes: ['judge: fine'],
  mergeCommit: 'f'.repeat(40),
  storyCommit: 'e'.repeat(40),
  finishedAt: '2026-12-03T00:00:00.000Z',
  timings: {},
};
const merges = new Map([['a', 'f'.repeat(40)]]);

describe('a record as a local run may use it', () => {
  it('keeps a done record whose merge is on the epic branch, guarded or not', () => {
    expect(verifiedRecord(done, merges, false)).toBe(done);
    expect(verifiedRecord(done, merges, true)).toBe(done);
  });

  it('runs again a done record whose merge is not on the epic branch, even where the state is guarded', () => {
    for (const guarded of [false, true]) {
      const seen = verifiedRecord(done, new Map(), guarded);
      expect(seen.status).toBe('planned');
      expect(seen).not.toHaveProperty('mergeCommit');
      expect(seen).not.toHaveProperty('storyCommit');
      expect(seen).not.toHaveProperty('finishedAt');
      expect(seen.notes).toEqual([
        'judge: fine',
        'its record named the merge ffffffffffff, which is not on the epic branch: run again',
      ]);
    }
  });

  it('takes "done without a merge" at its word only where the agent could not have written it', () => {
    const { mergeCommit: _m, ...inPlace } = done;
    expect(verifiedRecord(inPlace, new Map(), true)).toBe(inPlace);
    expect(verifiedRecord(inPlace, new Map(), false)).toMatchObject({
      status: 'planned',
      notes: [
        'judge: fine',
        'its record said done without a merge, where the agent could have written it: run again',
      ],
    });
  });

  it('leaves any other record as it is', () => {
    const failed: StoryRecord = { ...done, status: 'failed' };
    expect(verifiedRecord(failed, new Map(), false)).toBe(failed);
  });
});
