import { describe, expect, it } from '@jest/globals';
import {
  conflictExcerpt,
  conflictMarkerLines,
  landNextStep,
  nextLandJob,
  readLandLog,
  unfinishedStories,
  withLand,
  type LandRecord,
} from '../../../src/core/land/index.js';
import type { StoryRecord } from '../../../src/core/model.js';
import { isEpicflowError } from '../../../src/core/errors.js';
import { plan, story } from '../prompt/fixtures.js';

describe('conflictMarkerLines', () => {
  it.each([
    ['none', 'a\nb\n', []],
    ['a whole conflict', 'x\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> 1a2b3c\ny\n', [2, 4, 6]],
    ['diff3 style', '<<<<<<< ours\na\n||||||| base\no\n=======\nb\n>>>>>>> theirs\n', [1, 3, 5, 7]],
    ['a heading underline is no marker', 'Title\n=======\ntext\n', []],
    ['a lone opening marker', 'a\n<<<<<<< HEAD\n', [2]],
    ['a lone closing marker', '>>>>>>> main\n', [1]],
    ['CRLF lines', '<<<<<<< HEAD\r\na\r\n=======\r\nb\r\n>>>>>>> x\r\n', [1, 3, 5]],
    ['eight signs are no marker', '<<<<<<<< not\n', []],
    ['a marker inside a line is none', 'say <<<<<<< HEAD\n', []],
  ])('%s', (_name, text, expected) => {
    expect(conflictMarkerLines(text)).toEqual(expected);
  });
});

describe('conflictExcerpt', () => {
  it('shows the markers with numbered context, gaps marked', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    lines[9] = '<<<<<<< HEAD';
    lines[11] = '=======';
    lines[13] = '>>>>>>> main';
    const out = conflictExcerpt(lines.join('\n'), 1);
    expect(out).toBe(
      [
        '   9| line 9',
        '  10| <<<<<<< HEAD',
        '  11| line 11',
        '  12| =======',
        '  13| line 13',
        '  14| >>>>>>> main',
        '  15| line 15',
      ].join('\n'),
    );
    const two = conflictExcerpt('<<<<<<< a\n=======\n>>>>>>> b\n1\n2\n3\n4\n<<<<<<< a\n', 0);
    expect(two.split('\n')).toEqual([
      '   1| <<<<<<< a',
      '   2| =======',
      '   3| >>>>>>> b',
      '…',
      '   8| <<<<<<< a',
    ]);
  });
  it('is cut and says so past its limit, and empty without markers', () => {
    const long = `<<<<<<< HEAD\n${'x'.repeat(500)}\n>>>>>>> main\n`;
    expect(conflictExcerpt(long, 3, 100)).toMatch(/\n\[… \d+ more characters cut\]$/);
    expect(conflictExcerpt('clean\n')).toBe('');
  });
});

function rec(id: string, status: StoryRecord['status'], planHash = `h-${id}`): StoryRecord {
  return {
    version: 1,
    epic: 'e',
    story: id,
    planHash,
    status,
    branch: `story/e/${id}`,
    attempt: 1,
    executors: [],
    usage: [],
    notes: [],
    timings: {},
  };
}

describe('unfinishedStories', () => {
  const p = plan([story('a'), story('b'), story('c'), story('d'), story('e')]);
  it('counts merged and recorded-done stories as done, names the rest with their status', () => {
    const records = new Map([
      ['b', rec('b', 'done')],
      ['c', rec('c', 'failed')],
      ['d', rec('d', 'done', 'old-hash')],
      ['e', rec('e', 'waiting')],
    ]);
    expect(unfinishedStories(p, records, new Map([['a', 'sha-a']]))).toEqual([
      { id: 'c', status: 'failed' },
      { id: 'd', status: 'planned' },
      { id: 'e', status: 'waiting' },
    ]);
  });
  it('a story merged on the branch is done whatever its record says', () => {
    const records = new Map([['a', rec('a', 'failed')]]);
    const merged = new Map(['a', 'b', 'c', 'd', 'e'].map((id) => [id, `sha-${id}`]));
    expect(unfinishedStories(p, records, merged)).toEqual([]);
  });
});

const landing: LandRecord = {
  job: 'land-1',
  into: 'main',
  epicBranch: 'epic/e',
  startedAt: '2025-01-01T00:00:00.000Z',
  outcome: 'running',
  epicHeadBefore: 'e1',
  intoHeadBefore: 'm1',
  conflicts: [],
  failingGates: [],
  rounds: 0,
  executors: [],
  usage: [],
  notes: [],
};

describe('the landing log', () => {
  it('starts empty, numbers the jobs and replaces a job by its id', () => {
    const empty = readLandLog(null, 'land.json');
    expect(nextLandJob(empty)).toBe('land-1');
    const one = withLand(empty, landing);
    expect(nextLandJob(one)).toBe('land-2');
    const done = withLand(one, { ...landing, outcome: 'landed' });
    expect(done.lands).toEqual([{ ...landing, outcome: 'landed' }]);
    expect(readLandLog(JSON.parse(JSON.stringify(done)), 'land.json')).toEqual(done);
  });
  it('names the file and the field of an unreadable log', () => {
    let error: unknown;
    try {
      readLandLog({ version: 1, lands: [{ ...landing, rounds: -1 }] }, '/x/land.json');
    } catch (e) {
      error = e;
    }
    expect(isEpicflowError(error, 'state')).toBe(true);
    expect((error as Error).message).toBe('unreadable landing record: /x/land.json');
    expect((error as { details: string[] }).details[0]).toMatch(/^lands\.0\.rounds: /);
  });
});

describe('landNextStep', () => {
  it.each([
    [
      'conflicts',
      { conflicts: ['a.ts', 'b.ts'], failingGates: ['npm test'] },
      'resolve a.ts, b.ts on epic/e yourself (merge main into it), then rerun `epicflow land`',
    ],
    [
      'red gates',
      { conflicts: [], failingGates: ['npm test'] },
      'merge main into epic/e yourself and make `npm test` pass, then rerun `epicflow land`',
    ],
    ['neither', { conflicts: [], failingGates: [] }, 'rerun `epicflow land`'],
  ])('%s', (_name, input, expected) => {
    expect(landNextStep({ epicBranch: 'epic/e', into: 'main', ...input })).toBe(expected);
  });
});
