import { describe, expect, it } from '@jest/globals';
import {
  BOARD_STATUSES,
  boardValues,
  failureMarker,
  hasMarker,
  markerComment,
  storyMarker,
  withMarker,
} from '../../../src/core/epic/index.js';
import type { StoryRecord, UsageEntry } from '../../../src/core/model.js';

describe('markers', () => {
  it('are hidden HTML comments in a fixed format', () => {
    expect(markerComment('status')).toBe('<!-- epicflow:status -->');
    expect(markerComment('report')).toBe('<!-- epicflow:report -->');
    expect(markerComment('violations')).toBe('<!-- epicflow:violations -->');
    expect(markerComment(storyMarker('api'))).toBe('<!-- epicflow:story:api -->');
    expect(markerComment(failureMarker('api', 2))).toBe('<!-- epicflow:failure:api:2 -->');
  });

  it('withMarker puts the marker on the last line, once', () => {
    const body = withMarker('Hello\n\n', 'status');
    expect(body).toBe('Hello\n\n<!-- epicflow:status -->\n');
    expect(withMarker(body, 'status')).toBe(body);
    expect(hasMarker(body, 'status')).toBe(true);
    expect(hasMarker(body, 'report')).toBe(false);
  });

  it('a story marker never matches a longer id', () => {
    const body = withMarker('x', storyMarker('api-v2'));
    expect(hasMarker(body, storyMarker('api'))).toBe(false);
    expect(hasMarker(body, storyMarker('api-v2'))).toBe(true);
  });
});

function usage(tokens: number, costUsd: number | null, measured = true): UsageEntry {
  return {
    executor: 'codex',
    model: 'm',
    tokens: { input: tokens, cachedInput: 1, cacheWrite: 0, output: 2 },
    measured,
    costUsd,
    costSource: costUsd === null ? 'none' : 'cli',
  };
}

function rec(extra: Partial<StoryRecord>): StoryRecord {
  return {
    version: 1,
    epic: '12',
    story: 'api',
    planHash: 'h',
    status: 'active',
    branch: 'story/12/api',
    attempt: 1,
    executors: [],
    usage: [],
    notes: [],
    timings: {},
    ...extra,
  };
}

describe('boardValues', () => {
  it('maps a planned story without a record', () => {
    expect(boardValues({ wave: 2 })).toEqual({
      Status: 'Planned',
      Wave: 2,
      Executor: '',
      Tokens: 0,
      Cost: null,
    });
  });

  it('maps each status to its board option', () => {
    const statuses = ['planned', 'active', 'waiting', 'done', 'failed'] as const;
    expect(
      statuses.map((status) => boardValues({ wave: 1, record: rec({ status }) }).Status),
    ).toEqual([...BOARD_STATUSES]);
  });

  it('shows the executor chain, all tokens, and the known cost', () => {
    const record = rec({
      status: 'failed',
      executors: ['codex', 'claude'],
      usage: [usage(100, 0.1), usage(200, 0.2, false), usage(50, null)],
    });
    expect(boardValues({ wave: 3, record })).toEqual({
      Status: 'Failed',
      Wave: 3,
      Executor: 'codex → claude',
      Tokens: 359,
      Cost: 0.3,
    });
  });

  it('says Done for a merged story whatever its record says', () => {
    expect(boardValues({ wave: 1, record: rec({ status: 'active' }), merged: true }).Status).toBe(
      'Done',
    );
  });
});
