import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain-JS module of the test setup, without types
import LongestFirst from './sequencer.js';

interface FakeTest {
  path: string;
  duration?: number;
  context: {
    config: {
      rootDir: string;
      cache: boolean;
      cacheDirectory: string;
      id: string;
      haste: object;
      displayName?: { name: string };
    };
    hasteFS: { getSize(path: string): number };
  };
}

/** Runs `body` with the tests' cache folder at a fresh folder of its own. */
function withCache<T>(body: (cache: string, root: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'epicflow-sequencer-'));
  const saved = process.env['EPICFLOW_TEST_CACHE'];
  process.env['EPICFLOW_TEST_CACHE'] = join(dir, 'cache');
  try {
    return body(join(dir, 'cache'), join(dir, 'clone'));
  } finally {
    if (saved === undefined) delete process.env['EPICFLOW_TEST_CACHE'];
    else process.env['EPICFLOW_TEST_CACHE'] = saved;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Test files of a clone at `root` whose size is their name's length (jest's fallback order). */
function tests(root: string, names: string[]): FakeTest[] {
  const context = {
    // jest's own times live in a cache named after the configuration: empty in a new clone.
    config: {
      rootDir: root,
      cache: true,
      cacheDirectory: join(root, 'jest-cache'),
      id: 'p',
      haste: {},
    },
    hasteFS: { getSize: (path: string) => path.length },
  };
  return names.map((name) => ({ path: join(root, name), context }));
}

describe('the test sequencer', () => {
  it('starts a fresh clone with the files that took longest last time, by their path in the project', () => {
    withCache((cache, root) => {
      mkdirSync(join(cache, 'test-times'), { recursive: true });
      writeFileSync(
        join(cache, 'test-times', 'test-times.json'),
        JSON.stringify({ 'test/a-long-name.test.ts': 100, 'test/crash.test.ts': 30000 }),
      );
      const sequencer = new LongestFirst({});
      const order = sequencer
        .sort(tests(root, ['test/a-long-name.test.ts', 'test/crash.test.ts']))
        .map((t: FakeTest) => t.path.slice(root.length + 1));
      // By size alone, the longer name would start first.
      expect(order).toEqual(['test/crash.test.ts', 'test/a-long-name.test.ts']);
    });
  });

  it('keeps each file’s time by its path in the project after a run, for the next clone', () => {
    withCache((cache, root) => {
      const run = tests(root, ['test/x.test.ts', 'test/y.test.ts']);
      mkdirSync(join(root, 'jest-cache'), { recursive: true });
      new LongestFirst({}).cacheResults(run, {
        testResults: [
          { testFilePath: join(root, 'test/x.test.ts'), perfStats: { start: 0, end: 1200 } },
          {
            testFilePath: join(root, 'test/y.test.ts'),
            perfStats: { runtime: 300 },
            skipped: false,
          },
        ],
      });
      const kept = JSON.parse(readFileSync(join(cache, 'test-times', 'test-times.json'), 'utf8'));
      expect(kept).toEqual({ 'test/x.test.ts': 1200, 'test/y.test.ts': 300 });
    });
  });

  it('asks the machine for its modes (pytest starts Python) only for a run beyond the unit project', () => {
    withCache((cache, root) => {
      // A python3 first on PATH that notes each start: a PATH no answer is kept for yet.
      const bin = join(cache, 'bin');
      mkdirSync(bin, { recursive: true });
      const noted = join(cache, 'python3-started');
      writeFileSync(join(bin, 'python3'), `#!/bin/sh\necho "$@" >> '${noted}'\n`, {
        mode: 0o755,
      });
      const saved = process.env['PATH'];
      process.env['PATH'] = `${bin}:${saved ?? ''}`;
      try {
        const ofProject = (name: string, files: string[]): FakeTest[] =>
          tests(root, files).map((t) => ({
            ...t,
            context: { ...t.context, config: { ...t.context.config, displayName: { name } } },
          }));
        const unit = ofProject('unit', ['test/core/a.test.ts', 'test/core/b.test.ts']);
        expect(new LongestFirst({}).sort(unit)).toHaveLength(2);
        expect(existsSync(noted)).toBe(false);
        const mixed = [...unit, ...ofProject('process', ['test/engine/c.test.ts'])];
        expect(new LongestFirst({}).sort(mixed)).toHaveLength(3);
        expect(readFileSync(noted, 'utf8')).toContain('-m pytest --version');
      } finally {
        if (saved === undefined) delete process.env['PATH'];
        else process.env['PATH'] = saved;
      }
    });
  });

  it('orders by file size, as jest does, when no time is known', () => {
    withCache((_cache, root) => {
      const order = new LongestFirst({})
        .sort(tests(root, ['test/b.test.ts', 'test/a-longer.test.ts']))
        .map((t: FakeTest) => t.path.slice(root.length + 1));
      expect(order).toEqual(['test/a-longer.test.ts', 'test/b.test.ts']);
    });
  });
});
