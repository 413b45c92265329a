#!/usr/bin/env node
/**
 * `npm run demo`: a whole epic delivered locally in under a minute. It creates a
 * small Node project with `node --test` tests in a temporary folder, an epic of
 * six stories in three waves, and a config whose executors run a SCRIPTED demo
 * coder (scripts/demo/demo-coder.js, a stand-in for an AI agent). Watch stories
 * run in parallel, one gate failure fixed in a fix round, one stray edit outside
 * a story's perimeter put back, and the report at the end.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../lib/cli/commands/run.js';

const here = dirname(fileURLToPath(import.meta.url));
const coder = join(here, 'demo', 'demo-coder.js');

const PLAN = `# Text kit

Small text helpers, built as one epic.

\`\`\`epicflow
stories:
  - id: slugify
    title: Slugify text
    description: Export slugify(text) that lower-cases text and joins words with dashes.
    owns: [src/slugify.js, test/slugify.test.js]
    provides: ["slugify(text)"]
  - id: word-count
    title: Count words
    description: Export wordCount(text), ignoring extra whitespace.
    owns: [src/word-count.js, test/word-count.test.js]
    provides: ["wordCount(text)"]
    acceptance: ["wordCount('  two   words ') is 2"]
  - id: capitalize
    title: Capitalize a word
    description: Export capitalize(word).
    owns: [src/capitalize.js, test/capitalize.test.js]
    provides: ["capitalize(word)"]
  - id: title-case
    title: Title case
    description: Export titleCase(text) using capitalize.
    dependsOn: [capitalize]
    owns: [src/title-case.js, test/title-case.test.js]
    provides: ["titleCase(text)"]
  - id: summary
    title: Summarise text
    description: Export summary(text) such as "3 words", using wordCount.
    dependsOn: [word-count]
    owns: [src/summary.js, test/summary.test.js]
  - id: index
    title: One entry point
    description: Re-export every helper from src/index.js.
    dependsOn: [slugify, title-case, summary]
    owns: [src/index.js, test/index.test.js]
\`\`\`
`;

const CONFIG = `# Two executors running the scripted demo coder (a stand-in for AI agents).
executors:
  - id: demo-a
    harness: command
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(coder)}]
    model: demo-model
    slots: 2
    priority: 1
  - id: demo-b
    harness: command
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(coder)}]
    model: demo-model
    slots: 1
    priority: 2
gates: ["node --test"]
fixRounds: 2
concurrency: 3
# An illustrative price for the demo's made-up model, in US dollars per million tokens.
prices:
  demo-model: { input: 1.25, cachedInput: 0.125, cacheWrite: 1.25, output: 10 }
`;

function git(cwd, ...args) {
  execFileSync('git', args, { cwd, stdio: 'ignore' });
}

function write(root, path, text) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

const work = mkdtempSync(join(tmpdir(), 'epicflow-demo-'));
const repo = join(work, 'text-kit');
mkdirSync(repo);
write(
  repo,
  'package.json',
  '{ "name": "text-kit", "type": "module", "scripts": { "test": "node --test" } }\n',
);
write(repo, 'README.md', '# text-kit\n\nSmall text helpers.\n');
write(
  repo,
  'test/smoke.test.js',
  "import test from 'node:test';\n\ntest('the project runs its tests', () => {});\n",
);
write(repo, 'epicflow.yml', CONFIG);
write(work, 'text-kit-epic.md', PLAN);
git(repo, 'init', '-q', '-b', 'main');
git(repo, 'config', 'user.name', 'Demo');
git(repo, 'config', 'user.email', 'demo@example.com');
git(repo, 'add', '-A');
git(repo, 'commit', '-q', '-m', 'A small Node project');

process.stdout.write(`epicflow demo in ${work}\n\n`);
const code = await runCommand(
  { file: join(work, 'text-kit-epic.md'), repo },
  {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    cwd: work,
    isTTY: Boolean(process.stdout.isTTY),
  },
);
const report = join(repo, '.git', 'epicflow', 'text-kit-epic', 'report.md');
process.stdout.write(`\n${readFileSync(report, 'utf8')}\n`);
process.stdout.write(
  `The epic branch is epic/text-kit-epic in ${repo} (git log --graph epic/text-kit-epic).\n`,
);
process.exitCode = code;
