import { describe, expect, it } from '@jest/globals';
import { formatEvent, LiveBoard } from '../../src/cli/commands/run.js';
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
    const board = new LiveBoard((s) => (out += s));
    board.event({
      at: '',
      kind: 'status',
      story: 'a',
      message: 'started with bot',
      data: { status: 'active' },
    });
    expect(out).toBe('[a] started with bot\n  active  a\n');
    out = '';
    board.event({
      at: '',
      kind: 'status',
      story: 'b',
      message: 'waiting: waiting for a',
      data: { status: 'waiting' },
    });
    expect(out).toBe('\u001b[1A\u001b[J[b] waiting: waiting for a\n  active  a\n  waiting b\n');
  });
});
