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
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestEnvironment } from 'jest-environment-node';
// Modules compiled once per worker, not once per file (module-code-cache.js).
import './module-code-cache.js';

const LIMIT_MB = Number(process.env['EPICFLOW_TEST_WORKER_RSS_MB'] ?? 1000);
/** The exit code of a worker that steps down for a fresh one. */
const STEP_DOWN = 75;

/**
 * With `EPICFLOW_TEST_CPU=<file>` (Linux), each test file's CPU time is appended to `<file>`
 * as a line of JSON (`{"file": …, "cpu": <seconds>}`): what the process that ran it spent, its
 * own and that of every process it started and reaped meanwhile (the file's helper, Action
 * jobs, agents, gates, git), user and system time together (`/proc/self/stat`). The time a
 * file waits is not in it; on a machine whose cores are all busy, CPU is what a file costs
 * the run (docs/testing.md, "How long it takes").
 */
const CPU_LOG = process.env['EPICFLOW_TEST_CPU'];

/** CPU seconds of this process and of its reaped children. */
function cpuSeconds() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: fields 14–17 of proc(5), in clock ticks (100 a second).
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
}

/** Whether this process has a child that has not been reaped yet. */
function hasChildren() {
  return readdirSync('/proc/self/task').some(
    (task) => readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim() !== '',
  );
}

export default class FreshWorkerEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.cpuAtStart = 0;
  }

  async setup() {
    // Only a worker process steps down (in band, the tests run in jest's own process).
    const worker = typeof process.send === 'function';
    if (worker && process.memoryUsage().rss > LIMIT_MB * 1024 * 1024) process.exit(STEP_DOWN);
    if (CPU_LOG !== undefined) this.cpuAtStart = cpuSeconds();
    await super.setup();
  }

  async teardown() {
    await super.teardown();
    if (CPU_LOG === undefined) return;
    // The file's helper exits once its last child closed, after the file's end: wait for it
    // (and anything else the file started) to be reaped, so its CPU is counted here.
    for (let i = 0; i < 150 && hasChildren(); i++) await sleep(20);
    const cpu = Math.round((cpuSeconds() - this.cpuAtStart) * 100) / 100;
    const file = this.testPath.slice(process.cwd().length + 1);
    appendFileSync(CPU_LOG, `${JSON.stringify({ file, cpu })}\n`);
  }
}
