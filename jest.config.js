/**
 * Four projects, so each kind of test gets what it needs (see docs/testing.md):
 *
 * - unit:    pure code (the core, the shipped examples, the lint rules) — no processes,
 *            no servers;
 *            `npm run test:fast`
 * - github:  the GitHub double, the GitHub adapter and the App (loopback HTTP)
 * - process: real git, real agent CLIs, the local engine, the CLI, the packed package and
 *            the release scripts (child processes)
 * - action:  the bundled Action run as a process (built once per run by its globalSetup)
 *
 * They share one worker pool. Most of the slow suites wait on child processes and
 * loopback servers, not on the CPU, so the pool is larger than the core count.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prebundled } from './test/support/prebundled.js';
import { testTempFolder } from './test/support/temp-folder.js';

// The tests' temporary folders in memory where the machine has room (test/support/temp-folder.js):
// set before any worker starts, so every test and every process it starts inherits it.
const tempFolder = testTempFolder();
if (tempFolder !== null) process.env['TMPDIR'] = tempFolder;

// The largest dependencies as one module each (test/support/prebundled.js), resolved to
// their bundles by test/support/resolver.js in every worker.
process.env['EPICFLOW_TEST_PREBUNDLED_MAP'] = JSON.stringify(
  await prebundled(dirname(fileURLToPath(import.meta.url))),
);

const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'es6' },
    },
  ],
};

/**
 * Time budgets in seconds (test/support/budgets.js, docs/testing.md "Budgets"): how long one
 * test file may take on the development machine under the suite's own load, scaled by how
 * much slower the host is when the tests run. A file over its budget fails the run.
 */
const budgets = {
  /** Each project's, set below with the project. */
  projects: /** @type {Record<string, number>} */ ({}),
  /** A file's own, by its path in the project, where the project's does not fit. */
  files: {
    // Compiles the package when the built one is not current (a fresh clone, a changed source).
    'test/app/start.test.ts': 120,
    'test/package/smoke.test.ts': 150,
    // Downloads Node 24 into the tests' cache folder the first time.
    'test/action/node24.test.ts': 180,
    // The files that run the real agent CLIs: the first of them installs the pinned CLIs
    // (test/agent-clis, about 1.1 GB unpacked) into the tests' cache folder, the others wait
    // for it (test/support/agent-clis.ts): 16–27 s on the development machine (2026-12-06; the
    // four contract files together 47 s cold, 28 s warm), more where the network is slow. The
    // 180 s of node24.test.ts's first download, for the same reason.
    'test/adapters/executors/codex.contract.test.ts': 180,
    'test/adapters/executors/claude.contract.test.ts': 180,
    'test/adapters/executors/gemini.contract.test.ts': 180,
    'test/adapters/executors/opencode.contract.test.ts': 180,
    'test/engine/planner-agents.test.ts': 180,
    'test/engine/claims.test.ts': 180,
    'test/cli/new-user.test.ts': 180,
    // The files with the most Action jobs had budgets of their own (210–300 s) until the
    // 2026-12-06 evening, when each kept one end-to-end run per job kind and mode (bundle
    // processes 133 → 72 over sixteen files; docs/testing.md, "Where a rule is tested"): the
    // longest now takes about 30 s in a full run, well within the action project's 170 s.
    // Two review rounds with the App, four revision jobs in-process (11 story jobs until the
    // 2026-12-05 night, when the epics under review came to be delivered by the App harness:
    // 151 s → 100 s alone, back to back; 139 s in the last full run; five revision jobs until
    // 2026-12-06, night, when pay's first revision came to be played by the harness).
    'test/orchestrator/review-round.test.ts': 150,
    // A story's jobs in-process, three with a judge, two of them racing another story's jobs
    // (45 s alone on a quiet machine, 189 s on a loaded one).
    'test/orchestrator/story-job.test.ts': 170,
    // Eighteen landings (2026-12-05: 171 s, 178 s and 199 s in full runs; 318 s at a host
    // factor of 1.26 once epicflow read the agent's tree itself). Since they land in copies of
    // one delivered epic (4 local runs instead of 18; docs/testing.md, "Where a rule is
    // tested"), 270 s → 119 s alone, back to back: about one and a half times the new time.
    'test/engine/land.test.ts': 180,
    // A judged story crashed once and run again in a copy per test (3 crashes → 1; 135 s → 34 s alone).
    'test/engine/judge-reuse.test.ts': 60,
    // The two task-plan tests after a crash share one crashed story, each in a copy (2 crash runs → 1).
    'test/engine/tasks.test.ts': 110,
    // The two forged done records share one crashed epic, each forged in a copy (3 crash runs → 2).
    'test/engine/forged-state.test.ts': 80,
    // One sabotaged story refused and taken (9 stories → 3); the ways to weaken a test are the rule's cases.
    'test/engine/existing-tests.test.ts': 80,
    // Python and Go each deliver one epic whose second story breaks a test and fixes it (5 runs → 3).
    'test/cli/detected-gates.test.ts': 100,
    // One npm workspace whose api story breaks a test and fixes it beside the web story (3 runs → 2).
    'test/cli/packages.test.ts': 90,
    // No lockfile and setupCache: false each shown by one story, not two (setup in every checkout).
    'test/engine/setup-cache.test.ts': 60,
    // Epics killed and run again at each checkpoint (148 s in the 2026-12-05 evening run).
    'test/engine/crash.test.ts': 220,
  },
  /** How long the budget reporter's fixed work takes on the development machine, quiet. */
  referenceMs: 300,
};

/**
 * @param {string} name
 * @param {string[]} roots
 * @param {{ budget: number } & object} options the project's time budget per file, and jest options
 */
function project(name, roots, { budget, ...extra }) {
  budgets.projects[name] = budget;
  return {
    displayName: name,
    // jest's node environment, started in a worker that has not grown too big.
    testEnvironment: '<rootDir>/test/support/fresh-worker-environment.js',
    rootDir: '.',
    testMatch: roots.map((r) => `<rootDir>/test/${r}/**/*.test.ts`),
    extensionsToTreatAsEsm: ['.ts'],
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    resolver: '<rootDir>/test/support/resolver.js',
    transform,
    // After every test: each GitHub double still running is free of contract
    // violations, each App under test logged no unexpected error.
    setupFilesAfterEnv: [
      '<rootDir>/test/support/after-each.ts',
      // epicflow's processes started from a small helper, not the large worker.
      '<rootDir>/test/support/start-from-helper.ts',
    ],
    ...extra,
  };
}

/** @type {import('jest').Config} */
export default {
  projects: [
    project('unit', ['core', 'examples', 'lint'], { budget: 30 }),
    project('github', ['github-double', 'adapters/github', 'app'], { budget: 60 }),
    project(
      'process',
      [
        'engine',
        'orchestrator',
        'adapters/executors',
        'adapters/git',
        'adapters/process',
        'adapters/state',
        'adapters/config',
        'support',
        'cli',
        'package',
        'release',
      ],
      { budget: 160 },
    ),
    project('action', ['action'], {
      budget: 170,
      globalSetup: '<rootDir>/test/action/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/action/support/global-teardown.ts',
    }),
  ],
  // Longest files first, by times kept across clones; files that need a mode this machine
  // lacks (`@needs`, test/support/modes.js) left out (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  maxWorkers: Number(process.env['EPICFLOW_TEST_WORKERS'] ?? 3),
  // A guard against a hung test, never a measure of speed: three times what a test needs on a
  // shared machine at its slowest (a host three to four times slower than usual ran the suite
  // at 60 s and timed out tests that pass); explicit timeouts in test files keep the same ratio.
  testTimeout: 180_000,
  reporters: [
    'default',
    ['<rootDir>/test/support/slowest-files.js', { count: 15 }],
    // Once, at the end: the modes that did not run and why; a failure with CI=true.
    '<rootDir>/test/support/modes-reporter.js',
    // A file over its time budget fails the run.
    ['<rootDir>/test/support/budgets.js', budgets],
  ],
};
