/**
 * The order test files start in: longest first, so that no long file starts last and
 * runs alone while the other workers have nothing left (a fresh clone's run has no
 * timings of its own, and jest then orders by file size, which puts short files with
 * long end-to-end runs, such as the crash and epic end-to-end tests, at the end).
 *
 * jest's own sequencer keeps each file's last time by its absolute path, in a cache
 * folder named after the configuration, so every new clone starts without them. This
 * one also keeps them by path within the project, in the tests' cache folder
 * (`test-times.json`, see test/support/cache-dir.ts), and uses them where jest has none.
 *
 * It also leaves out the files that need a mode this machine lacks (`@needs`, see
 * test/support/modes.js); the modes reporter says which at the end of the run.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import jestSequencer from '@jest/test-sequencer';
import { detectModes, modesOfFile, notRun, notRunReport } from './modes.js';

const Sequencer = jestSequencer.default ?? jestSequencer;

/** The same folder as test/support/cache-dir.ts `testCacheDir('test-times')`. */
function timesFile() {
  const root =
    process.env['EPICFLOW_TEST_CACHE'] ??
    join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'epicflow');
  return join(root, 'test-times', 'test-times.json');
}

function readTimes() {
  try {
    const parsed = JSON.parse(readFileSync(timesFile(), 'utf8'));
    return parsed !== null && typeof parsed === 'object' ? parsed : {};
  } catch {
    return {}; // none yet, or unreadable: jest's own order
  }
}

export default class LongestFirst extends Sequencer {
  known = readTimes();

  sort(tests) {
    const declared = tests.map((test) => ({ test, modes: modesOfFile(test.path) }));
    // The unit project is pure code, which needs no mode: a run of it alone (`npm run
    // test:fast`, one unit file) does not ask the machine (pytest's check starts Python, a
    // second here before any file can start).
    const asks = declared.some(
      ({ test, modes }) => modes.length > 0 || test.context.config.displayName?.name !== 'unit',
    );
    const detected = asks ? detectModes() : { missing: new Map(), packages: [] };
    const runnable = [];
    notRun.length = 0;
    for (const { test, modes } of declared) {
      if (modes.some((m) => detected.missing.has(m))) notRun.push({ file: test.path, modes });
      else runnable.push(test);
    }
    // Nothing left to run: jest ends at once ("No tests found"), before any reporter.
    if (runnable.length === 0 && notRun.length > 0)
      process.stderr.write(`${notRunReport(notRun, detected, { rootDir: process.cwd() })}\n`);
    return super.sort(runnable);
  }

  time(test) {
    const own = super.time(test);
    if (own !== undefined && own !== null) return own;
    const kept = this.known[relative(test.context.config.rootDir, test.path)];
    return typeof kept === 'number' ? kept : undefined;
  }

  cacheResults(tests, results) {
    super.cacheResults(tests, results);
    const byPath = new Map(tests.map((t) => [t.path, t]));
    const times = { ...readTimes() };
    for (const r of results.testResults) {
      const test = byPath.get(r.testFilePath);
      if (test === undefined || r.skipped) continue;
      const ms = r.perfStats.runtime ?? r.perfStats.end - r.perfStats.start;
      if (ms > 0) times[relative(test.context.config.rootDir, r.testFilePath)] = ms;
    }
    const file = timesFile();
    try {
      mkdirSync(dirname(file), { recursive: true });
      // Parallel runs may write at once: each writes its own file, then renames.
      const tmp = `${file}.${process.pid}`;
      writeFileSync(tmp, JSON.stringify(times));
      renameSync(tmp, file);
    } catch {
      // A cache that cannot be written only costs the order of the next fresh clone.
    }
  }
}
