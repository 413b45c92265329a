/**
 * A jest reporter: every test file has a time budget, and a file that took longer fails the
 * run with its time and its budget (docs/testing.md, "Budgets"). A budget is set per jest
 * project in jest.config.js, with overrides per file; it is the time the file may take on the
 * development machine under the suite's own load, with room to grow.
 *
 * A budget must catch a file that grew, not a slow hour: the same tree has run three times
 * slower when the machine's host was busy. So budgets are scaled by this host's speed now:
 * before the tests start, and again at the end when a file is over its budget, the reporter
 * times a fixed piece of work (processes started from Node, as the tests start them, and
 * hashing) and divides by the time it took on the development machine (`referenceMs`); a
 * host slower than that multiplies every budget by as much, a faster one leaves them as they
 * are. `EPICFLOW_TEST_BUDGET_FACTOR=<n>` sets that factor instead of measuring it.
 */
import { execFile } from 'node:child_process';
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The fixed work: two Node processes, five `git --version`, and hashing 64 MB. */
async function work() {
  const started = performance.now();
  for (let i = 0; i < 2; i++) await exec(process.execPath, ['-e', '0']);
  for (let i = 0; i < 5; i++) await exec('git', ['--version']);
  const block = Buffer.alloc(1 << 20, 7);
  const hash = createHash('sha256');
  for (let i = 0; i < 64; i++) hash.update(block);
  hash.digest();
  return performance.now() - started;
}

/** How much slower than the development machine this host is now (1 when not slower). */
export async function hostFactor(referenceMs) {
  const fixed = process.env['EPICFLOW_TEST_BUDGET_FACTOR'];
  if (fixed !== undefined && fixed !== '') {
    const n = Number(fixed);
    if (!(n > 0))
      throw new Error(`EPICFLOW_TEST_BUDGET_FACTOR must be a number above 0, not "${fixed}"`);
    return { factor: n, how: 'EPICFLOW_TEST_BUDGET_FACTOR' };
  }
  const ms = await work();
  return {
    factor: Math.max(1, ms / referenceMs),
    how: `measured: ${Math.round(ms)} ms, reference ${referenceMs} ms`,
  };
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

export default class Budgets {
  /** @type {Error | undefined} */
  error = undefined;
  /** @type {{ file: string, ms: number, budget: number, project: string }[]} */
  files = [];

  /**
   * @param {{ rootDir: string }} globalConfig
   * @param {{ projects: Record<string, number>, files?: Record<string, number>, referenceMs: number }} options
   *   budgets in seconds, by project name and by a file's path in the project
   */
  constructor(globalConfig, options) {
    this.rootDir = globalConfig.rootDir;
    this.options = options;
  }

  async onRunStart() {
    this.start = await hostFactor(this.options.referenceMs);
  }

  onTestFileResult(test, result) {
    const file = relative(test.context.config.rootDir, result.testFilePath);
    const project = test.context.config.displayName?.name ?? '';
    const budget = this.options.files?.[file] ?? this.options.projects[project];
    const ms = result.perfStats.end - result.perfStats.start;
    this.files.push({ file, ms, budget: budget ?? NaN, project });
  }

  async onRunComplete() {
    const unbudgeted = this.files.filter((f) => Number.isNaN(f.budget));
    const over = this.files.filter((f) => f.ms > f.budget * 1000 * (this.start?.factor ?? 1));
    const lines = unbudgeted.map(
      (f) => `  ${f.file} has no budget: its project "${f.project}" needs one in jest.config.js`,
    );
    if (over.length > 0) {
      // The host may have slowed down during the run: measured again, the slower counts.
      const end = await hostFactor(this.options.referenceMs);
      const host = end.factor > (this.start?.factor ?? 0) ? end : this.start;
      for (const f of over) {
        const allowed = f.budget * 1000 * host.factor;
        if (f.ms <= allowed) continue;
        lines.push(
          `  ${f.file} took ${seconds(f.ms)}, over its budget of ${f.budget} s ` +
            `(${f.file in (this.options.files ?? {}) ? 'its own' : `project ${f.project}`}) ` +
            `× ${host.factor.toFixed(2)} for this host's speed (${host.how}) = ${seconds(allowed)}`,
        );
      }
    }
    if (lines.length === 0) return;
    const text = `Test file budgets (docs/testing.md, "Budgets"):\n${lines.join('\n')}`;
    this.error = new Error(text);
    process.stderr.write(`\n${text}\n`);
  }

  getLastError() {
    return this.error;
  }
}
