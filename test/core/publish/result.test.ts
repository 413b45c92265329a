import { describe, expect, it } from '@jest/globals';
import { isEpicflowError } from '../../../src/core/errors.js';
import {
  formatResultRecord,
  isResultRefusal,
  parseResultRecord,
  type ResultRecord,
} from '../../../src/core/publish/result.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

const RESULT: ResultRecord = {
  version: 1,
  epic: '7',
  story: 's1',
  attempt: 2,
  base: A,
  epicHead: A,
  storyCommit: B,
  gated: null,
  gates: [{ command: 'npm test', ok: true, timedOut: false, where: 'story' }],
  record: {
    version: 1,
    epic: '7',
    story: 's1',
    planHash: 'h',
    status: 'done',
    branch: 'epic/7/s1',
    attempt: 2,
    executors: ['claude'],
    usage: [],
    notes: [],
    storyCommit: B,
    timings: {},
  },
};

const EXPECTED = { epic: '7', story: 's1', attempt: 2 };

function refusal(text: string): string {
  try {
    parseResultRecord(text, EXPECTED);
  } catch (e) {
    expect(isEpicflowError(e, 'result')).toBe(true);
    expect(isResultRefusal(e, 'malformed')).toBe(true);
    return (e as Error).message;
  }
  throw new Error('not refused');
}

describe('the result record', () => {
  it('reads back what the work side writes', () => {
    expect(parseResultRecord(formatResultRecord(RESULT), EXPECTED)).toEqual(RESULT);
  });

  it('names the field that is wrong', () => {
    const text = (r: unknown): string => JSON.stringify(r);
    expect(refusal(text({ ...RESULT, version: 2 }))).toContain('version: ');
    expect(refusal(text({ ...RESULT, base: 'main' }))).toContain('base: expected a full commit id');
    expect(refusal(text({ ...RESULT, gates: [{ command: 'x' }] }))).toContain('gates.0.ok');
    expect(refusal(text({ ...RESULT, record: { ...RESULT.record, usage: 'none' } }))).toContain(
      'record.usage',
    );
    expect(refusal(text({ ...RESULT, extra: true }))).toContain('extra');
    expect(refusal('[1,')).toContain('is not JSON');
  });

  it('refuses a record of another story, epic or attempt, or one that disagrees with itself', () => {
    const text = (r: unknown): string => JSON.stringify(r);
    expect(refusal(text({ ...RESULT, story: 's2' }))).toBe(
      'the result record result.json field story is "s2", expected "s1"',
    );
    expect(refusal(text({ ...RESULT, epic: '8' }))).toContain('field epic is "8"');
    expect(refusal(text({ ...RESULT, attempt: 1 }))).toContain('field attempt is 1');
    expect(refusal(text({ ...RESULT, record: { ...RESULT.record, storyCommit: A } }))).toContain(
      'field record.storyCommit',
    );
  });
});
