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
const merged = new Map([['a', 'f'.repeat(40)]]);
const none = { merged: new Map<string, string>(), inPlace: new Set<string>() };

describe('a record as a local run may use it', () => {
  it('keeps a done record whose merge is on the epic branch, guarded or not', () => {
    for (const stateGuarded of [false, true]) {
      expect(verifiedRecord(done, { ...none, merged, stateGuarded })).toBe(done);
    }
  });

  it('runs again a done record whose merge is not on the epic branch, even where the state is guarded', () => {
    for (const stateGuarded of [false, true]) {
      const seen = verifiedRecord(done, { ...none, stateGuarded });
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

  it('keeps "done without a merge" where the state is guarded, or where its branch changes nothing the epic lacks', () => {
    const { mergeCommit: _m, ...inPlace } = done;
    expect(verifiedRecord(inPlace, { ...none, stateGuarded: true })).toBe(inPlace);
    expect(verifiedRecord(inPlace, { ...none, inPlace: new Set(['a']), stateGuarded: false })).toBe(
      inPlace,
    );
    expect(verifiedRecord(inPlace, { ...none, stateGuarded: false })).toMatchObject({
      status: 'planned',
      notes: [
        'judge: fine',
        'its record said done without a merge, but its branch is not there as the judge left it: run again',
      ],
    });
  });

  it('leaves any other record as it is', () => {
    const failed: StoryRecord = { ...done, status: 'failed' };
    expect(verifiedRecord(failed, { ...none, stateGuarded: false })).toBe(failed);
  });
});
