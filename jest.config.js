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
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'es6' },
    },
  ],
};

/** @param {string} name @param {string[]} roots @param {object} [extra] */
function project(name, roots, extra = {}) {
  return {
    displayName: name,
    // jest's node environment, started in a worker that has not grown too big.
    testEnvironment: '<rootDir>/test/support/fresh-worker-environment.js',
    rootDir: '.',
    testMatch: roots.map((r) => `<rootDir>/test/${r}/**/*.test.ts`),
    extensionsToTreatAsEsm: ['.ts'],
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    transform,
    // After every test: each GitHub double still running is free of contract
    // violations, each App under test logged no unexpected error.
    setupFilesAfterEnv: ['<rootDir>/test/support/after-each.ts'],
    ...extra,
  };
}

/** @type {import('jest').Config} */
export default {
  projects: [
    project('unit', ['core', 'examples', 'lint']),
    project('github', ['github-double', 'adapters/github', 'app']),
    project('process', [
      'engine',
      'adapters/executors',
      'adapters/git',
      'adapters/process',
      'adapters/state',
      'adapters/config',
      'support',
      'cli',
      'package',
      'release',
    ]),
    project('action', ['action'], {
      globalSetup: '<rootDir>/test/action/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/action/support/global-teardown.ts',
    }),
  ],
  // Longest files first, by times kept across clones (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  maxWorkers: Number(process.env['EPICFLOW_TEST_WORKERS'] ?? 3),
  // A guard against a hung test, never a measure of speed: three times what a test needs on a
  // shared machine at its slowest (a host three to four times slower than usual ran the suite
  // at 60 s and timed out tests that pass); explicit timeouts in test files keep the same ratio.
  testTimeout: 180_000,
  reporters: ['default', ['<rootDir>/test/support/slowest-files.js', { count: 15 }]],
};
