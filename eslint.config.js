import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

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
];
const ioPatterns = [
  '@octokit/*',
  '@actions/*',
  '**/adapters/**',
  '**/app/**',
  '**/action/**',
  '**/cli/**',
];

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
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  prettier,
);
