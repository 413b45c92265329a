import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/**
 * The layers (docs/architecture.md): entries (cli, app, action) → each host's jobs (jobs/github,
 * jobs/local) → the decision loop (orchestrator) and the shared wiring (composition) → use
 * cases (engine) → core; adapters implement the engine's ports. Each folder below may import
 * only what its rule leaves out.
 */

/** Modules the pure core must never reach: I/O, processes, GitHub, Actions. */
const ioModules = [
  'node:fs',
  'node:fs/promises',
  'fs',
  'fs/promises',
  'node:child_process',
  'child_process',
  'node:net',
  'node:http',
  'node:https',
  'execa',
  'simple-git',
  'probot',
  'node:process',
  'process',
];
const ioPatterns = [
  '@octokit/*',
  '@actions/*',
  '**/adapters/**',
  '**/app/**',
  '**/action/**',
  '**/cli/**',
  '**/engine/**',
  '**/orchestrator/**',
  '**/composition/**',
  '**/jobs/**',
];

/** The entries: nothing below them imports one. */
const entryPatterns = ['**/app/**', '**/action/**', '**/cli/**'];

/** Files, processes and the network: the engine reaches them through its ports. */
const fileAndProcessModules = [
  'node:fs',
  'node:fs/promises',
  'fs',
  'fs/promises',
  'node:child_process',
  'child_process',
];

/** GitHub's client and the Actions toolkit: only the GitHub adapter and the Action entry use them. */
const githubClientPatterns = ['@octokit/*', '@actions/*'];

/** GitHub's API is called in one place: the GitHub adapter's resources. */
const octokitSelectors = [
  {
    selector: "MemberExpression[property.name='octokit']",
    message:
      'Only src/adapters/github talks to the GitHub API: add a method to its resource instead of using .octokit.',
  },
  {
    selector: "ObjectPattern > Property[key.name='octokit']",
    message:
      'Only src/adapters/github talks to the GitHub API: add a method to its resource instead of taking its octokit.',
  },
];

/**
 * `no-restricted-imports` for one layer: the import patterns it may not use, and why.
 * (One rule per folder: ESLint takes a rule's options from the last block that sets it.)
 */
function layer(files, message, patterns, paths = []) {
  return {
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: paths.map((name) => ({ name, message })),
          patterns: [{ group: patterns, message }],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'lib/**', 'dist/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ioModules.map((name) => ({
            name,
            message: 'src/core is pure: do I/O in an adapter behind a port.',
          })),
          patterns: [
            {
              group: ioPatterns,
              message: 'src/core is pure: it imports no adapter, entry point, octokit or @actions.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'src/core is pure: pass what you need in.' },
        { name: 'fetch', message: 'src/core is pure: do I/O in an adapter behind a port.' },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Date',
          property: 'now',
          message: 'src/core is pure: take the time as an argument (the clock port gives it).',
        },
        {
          object: 'globalThis',
          property: 'process',
          message: 'src/core is pure: pass what you need in.',
        },
        {
          object: 'globalThis',
          property: 'fetch',
          message: 'src/core is pure: do I/O in an adapter behind a port.',
        },
      ],
    },
  },
  layer(
    ['src/engine/**/*.ts'],
    'src/engine holds the use cases: it imports its ports and src/core only; adapters are wired in src/composition.',
    [
      '**/adapters/**',
      '**/composition/**',
      '**/orchestrator/**',
      '**/jobs/**',
      ...entryPatterns,
      ...githubClientPatterns,
    ],
    ['execa', 'simple-git', 'probot', ...fileAndProcessModules],
  ),
  layer(
    ['src/adapters/**/*.ts'],
    'src/adapters implement ports: they import src/core, other adapters and the port types of src/engine/ports.ts, never a use case, the composition or an entry.',
    [
      '**/engine/*',
      '!**/engine/ports.js',
      '**/composition/**',
      '**/orchestrator/**',
      '**/jobs/**',
      ...entryPatterns,
    ],
  ),
  layer(
    ['src/composition/**/*.ts'],
    'src/composition wires adapters into the engine for the entries: it imports no GitHub use case, no job, no entry, and neither octokit nor @actions (the GitHub adapter and the Action entry use them).',
    ['**/orchestrator/**', '**/jobs/**', ...entryPatterns, ...githubClientPatterns],
  ),
  layer(
    ['src/orchestrator/**/*.ts'],
    'src/orchestrator is the GitHub side of the use cases: it imports no job (src/jobs), no entry (cli, app, action), and neither octokit nor @actions (GitHub through src/adapters/github, the runner through the Action entry).',
    ['**/jobs/**', ...entryPatterns, ...githubClientPatterns],
  ),
  ...[
    ['github', 'local'],
    ['local', 'github'],
  ].map(([host, other]) =>
    layer(
      [`src/jobs/${host}/**/*.ts`],
      "src/jobs holds each host's jobs in a folder of its own: src/jobs/github and src/jobs/local import neither each other nor an entry (cli, app, action), and neither octokit nor @actions; they use the orchestrator, the composition, the engine, the adapters and src/core.",
      [
        // The other host's folder, by any path: through src/jobs, or as a sibling.
        `**/jobs/${other}/**`,
        `../${other}/**`,
        `../../${other}/**`,
        ...entryPatterns,
        ...githubClientPatterns,
      ],
    ),
  ),
  ...[
    ['app', ['**/action/**', '**/cli/**']],
    ['action', ['**/app/**', '**/cli/**']],
    ['cli', ['**/app/**', '**/action/**']],
  ].map(([entry, others]) =>
    layer(
      [`src/${entry}/**/*.ts`],
      'src/app, src/action and src/cli are separate entries: none imports another; what they share lives in src/orchestrator or src/composition.',
      others,
    ),
  ),
  {
    // GitHub's API is called in one place: the GitHub adapter's resources.
    files: ['src/**/*.ts'],
    ignores: ['src/adapters/github/**'],
    rules: { 'no-restricted-syntax': ['error', ...octokitSelectors] },
  },
  {
    // The engine is wired, it loads nothing: an adapter comes in through a port, never
    // through a dynamic import. (The octokit rule above again: this block replaces it.)
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...octokitSelectors,
        {
          selector: 'ImportExpression',
          message:
            'src/engine holds the use cases: it loads nothing at run time; adapters are wired in src/composition and come in through ports.',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  prettier,
);
