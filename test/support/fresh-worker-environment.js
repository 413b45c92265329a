/**
 * jest's node environment, except that a test file never starts in a worker grown past
 * 400 MB (`EPICFLOW_TEST_WORKER_RSS_MB` sets another limit): the worker exits before the file's first line runs, and jest starts a
 * fresh worker and gives it the same file.
 *
 * Every process a test starts is first a fork of its worker, and a fork costs in proportion
 * to the worker's memory (3 ms from 40 MB, 22 ms from 500 MB, 66 ms from 1.5 GB); a worker
 * keeps about 100 MB of every App test file it ran. jest's own `workerIdleMemoryLimit` is not
 * used: it checks a worker's memory while the worker already starts the next file, then kills
 * it and runs that file again, leaving the first run's agents and jobs behind. Here the
 * check is made when nothing of the file has run yet (jest starts a worker again and resends
 * its file when the worker exits with a code other than 0, 137 and 143).
 */
import { TestEnvironment } from 'jest-environment-node';

const LIMIT_MB = Number(process.env['EPICFLOW_TEST_WORKER_RSS_MB'] ?? 400);
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
