/**
 * jest's node environment, except that a test file never starts in a worker grown past
 * 1,000 MB (`EPICFLOW_TEST_WORKER_RSS_MB` sets another limit): the worker exits before the file's first line runs, and jest starts a
 * fresh worker and gives it the same file.
 *
 * A worker keeps much of every App test file it ran, and a process it starts itself is a fork
 * of it, whose cost grows with its memory. epicflow's own processes start from a small helper
 * (test/support/process-starter.ts), so what is left is the tests' own `execFileSync`: 1.7 ms
 * of the worker's CPU a start at 380 MB, 0.8 ms at 80 MB. A fresh worker costs more than that
 * saves: at 1,000 MB instead of 400 MB the App tests took a seventh less CPU (2026-12-06,
 * docs/testing.md), the engine's and the Action's the same. jest's own `workerIdleMemoryLimit` is not
 * used: it checks a worker's memory while the worker already starts the next file, then kills
 * it and runs that file again, leaving the first run's agents and jobs behind. Here the
 * check is made when nothing of the file has run yet (jest starts a worker again and resends
 * its file when the worker exits with a code other than 0, 137 and 143).
 */
import { TestEnvironment } from 'jest-environment-node';

const LIMIT_MB = Number(process.env['EPICFLOW_TEST_WORKER_RSS_MB'] ?? 1000);
/** The exit code of a worker that steps down for a fresh one. */
const STEP_DOWN = 75;

export default class FreshWorkerEnvironment extends TestEnvironment {
  async setup() {
    // Only a worker process steps down (in band, the tests run in jest's own process).
    const worker = typeof process.send === 'function';
    if (worker && process.memoryUsage().rss > LIMIT_MB * 1024 * 1024) process.exit(STEP_DOWN);
    await super.setup();
  }
}
