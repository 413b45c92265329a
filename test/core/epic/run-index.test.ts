import { describe, expect, it } from '@jest/globals';
import { endRun, readRunIndex, startRun } from '../../../src/core/epic/run-index.js';
import { EpicflowError } from '../../../src/core/errors.js';

describe('the index of runs', () => {
  it('adds each run as running, writes its end, and marks a run that never ended as lost', () => {
    const first = startRun(readRunIndex(null, 'runs.json'), '2026-12-01T10:00:00Z');
    expect(first.id).toBe('run-1');
    // run-1 was killed: it never wrote its end.
    const second = startRun(first.index, '2026-12-01T11:00:00Z');
    expect(second.id).toBe('run-2');
    const ended = endRun(second.index, second.id, {
      endedAt: '2026-12-01T11:05:00Z',
      outcome: 'unfinished',
      summary: '1 done, 1 failed, 0 waiting',
    });
    expect(ended.runs).toEqual([
      {
        id: 'run-1',
        startedAt: '2026-12-01T10:00:00Z',
        endedAt: null,
        outcome: 'lost',
        summary: null,
      },
      {
        id: 'run-2',
        startedAt: '2026-12-01T11:00:00Z',
        endedAt: '2026-12-01T11:05:00Z',
        outcome: 'unfinished',
        summary: '1 done, 1 failed, 0 waiting',
      },
    ]);
    expect(readRunIndex(JSON.parse(JSON.stringify(ended)), 'runs.json')).toEqual(ended);
  });

  it('refuses a file that is not an index of runs, naming it and the field', () => {
    const read = (): unknown => readRunIndex({ version: 1, runs: [{ id: 3 }] }, '/x/runs.json');
    expect(read).toThrow(EpicflowError);
    expect(read).toThrow('unreadable index of runs: /x/runs.json');
    let error: unknown;
    try {
      read();
    } catch (e) {
      error = e;
    }
    expect((error as EpicflowError).details[0]).toMatch(/^runs\.0\.id: /);
  });
});
