import { describe, expect, it } from '@jest/globals';
import { formatEvent, LiveBoard, renderLiveLine } from '../../src/cli/commands/run.js';
import type { UsageEntry } from '../../src/core/model.js';
import { Mutex } from '../../src/engine/mutex.js';
import { mergeUsage } from '../../src/engine/usage.js';

const usage = (
  executor: string,
  input: number,
  costUsd: number | null,
  measured = true,
): UsageEntry => ({
  executor,
  model: 'm',
  tokens: { input, cachedInput: 0, cacheWrite: 0, output: 1 },
  measured,
  costUsd,
  costSource: costUsd === null ? 'none' : 'cli',
});

describe('mergeUsage', () => {
  it('sums per executor, model and kind, keeping estimates apart', () => {
    const merged = mergeUsage(
      [usage('a', 10, null)],
      [usage('a', 5, 0.5), usage('a', 7, null, false), usage('b', 1, 0.1)],
    );
    expect(merged).toEqual([
      {
        ...usage('a', 15, 0.5),
        tokens: { input: 15, cachedInput: 0, cacheWrite: 0, output: 2 },
        costSource: 'cli',
      },
      usage('a', 7, null, false),
      usage('b', 1, 0.1),
    ]);
  });
});

describe('Mutex', () => {
  it('runs one holder at a time, in arrival order', async () => {
    const mutex = new Mutex();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = mutex.run(async () => {
      log.push('first in');
      await gate;
      log.push('first out');
    });
    const second = mutex.run(async () => {
      log.push('second');
      return 2;
    });
    await Promise.resolve();
    expect(log).toEqual(['first in']);
    release();
    await first;
    expect(await second).toBe(2);
    expect(log).toEqual(['first in', 'first out', 'second']);
    await expect(mutex.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await mutex.run(async () => 'still usable')).toBe('still usable');
  });
});

describe('lanes', () => {
  it('prefixes story events with their story and epic events with epicflow', () => {
    expect(formatEvent({ at: '', kind: 'story', story: 'health', message: 'gates passed' })).toBe(
      '[health] gates passed',
    );
    expect(formatEvent({ at: '', kind: 'summary', message: 'running 1 of 4' })).toBe(
      'epicflow: running 1 of 4',
    );
  });

  it('redraws a compact board below the lanes on a terminal', () => {
    let out = '';
    let now = 0;
    const board = new LiveBoard(
      (s) => (out += s),
      () => now,
    );
    board.start(['a', 'b'], []);
    board.event({
      at: '',
      kind: 'status',
      story: 'a',
      message: 'started with bot',
      data: { status: 'active' },
    });
    expect(out).toBe(
      '[a] started with bot\n  active  a\n  planned b\n' +
        'epicflow: 0/2 done · running: a · 0s · no cost known yet\n',
    );
    out = '';
    board.event({
      at: '',
      kind: 'status',
      story: 'b',
      message: 'waiting: waiting for a',
      data: { status: 'waiting' },
    });
    expect(out).toBe(
      '\u001b[3A\u001b[J[b] waiting: waiting for a\n  active  a\n  waiting b\n' +
        'epicflow: 0/2 done · running: a · 0s · no cost known yet\n',
    );
    // A long agent turn: the line moves on without an event, and the cost follows the records.
    out = '';
    now = 65_000;
    board.record({
      version: 1,
      epic: 'e',
      story: 'a',
      planHash: 'h',
      status: 'active',
      branch: 'story/e/a',
      attempt: 1,
      executors: ['bot'],
      usage: [usage('bot', 10, 1.5)],
      notes: [],
      timings: {},
    });
    board.tick();
    expect(out).toBe(
      '\u001b[3A\u001b[J  active  a\n  waiting b\n' +
        'epicflow: 0/2 done · running: a · 1m 05s · $1.50 spent\n',
    );
  });

  it('tells done of all, what runs, the time and the cost in one line', () => {
    expect(
      renderLiveLine({
        done: 2,
        total: 5,
        running: ['api', 'ui'],
        elapsedMs: 185_000,
        usd: 1.234,
        priced: true,
        estimated: true,
      }),
    ).toBe('epicflow: 2/5 done · running: api, ui · 3m 05s · $1.23 (partly estimated) spent');
  });
});
