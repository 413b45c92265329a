/**
 * A new user's first hour, end to end through the CLI entry: a fresh repository
 * (default branch `trunk`, a package.json without a lockfile), `epicflow init`, then
 * `epicflow doctor` with two executors of which one lacks its key, then `epicflow run`
 * of a one-story plan with the REAL Claude Code CLI (on PATH, as the user installed it)
 * against the scripted model server on 127.0.0.1 through the user's gateway URL. The
 * setup is the one init chose (`npm install`), the gate the repository's own `npm test`.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AGENT_CLIS_INSTALL_MS, agentCliBin } from '../support/agent-clis.js';
import { epicflow } from '../support/cli.js';
import { explainWith, startModelServer, type ModelServer } from '../support/model-server/index.js';

const USAGE = { input: 1000, cachedInput: 100, cacheWrite: 50, output: 20 };
/**
 * Node, the system tools, and the agent CLIs as `npm install -g` would put them on PATH (the
 * pinned ones of test/agent-clis, installed into the tests' cache folder on first use).
 */
let PATH = '';
beforeAll(async () => {
  const agents = dirname(await agentCliBin('claude'));
  PATH = [agents, dirname(process.execPath), '/usr/bin', '/bin'].join(':');
}, AGENT_CLIS_INSTALL_MS);

let root: string | undefined;
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
  server = undefined;
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

const GREET = 'export const greet = (name) => `Hello, ${name}!`;\n';
const GREET_TEST = [
  "import { test } from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { greet } from '../src/greet.mjs';",
  "test('greets', () => assert.equal(greet('Ada'), 'Hello, Ada!'));",
  '',
].join('\n');

describe('a new user, from init to a merged story', () => {
  it('trunk, no lockfile, one executor without its key: one doctor report, then a green run', async () => {
    root = mkdtempSync(join(tmpdir(), 'epicflow-new-user-'));
    const dir = join(root, 'app');
    mkdirSync(join(dir, 'test'), { recursive: true });
    git(root, 'init', '-q', '-b', 'trunk', dir);
    git(dir, 'config', 'user.name', 'New User');
    git(dir, 'config', 'user.email', 'new@example.com');
    writeFileSync(
      join(dir, 'package.json'),
      `${JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
    );
    // The repository's own npm settings: nothing of `npm install` may leave this machine.
    writeFileSync(join(dir, '.npmrc'), 'audit=false\nfund=false\nupdate-notifier=false\n');
    writeFileSync(
      join(dir, 'test', 'smoke.test.mjs'),
      "import { test } from 'node:test';\ntest('runs', () => {});\n",
    );
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'first');

    // 1. init: the roster, setup and gate it chose, and what it was unsure of.
    const init = await epicflow(['init'], dir, { PATH });
    expect(init.code).toBe(0);
    expect(init.stderr).toBe(
      'warning: no npm lockfile: setup installs with "npm install", which can resolve other versions than yours; commit a lockfile to pin them\n',
    );
    const config = readFileSync(join(dir, '.github', 'epicflow.yml'), 'utf8');
    // Each command names the file it came from.
    expect(config).toMatch(/^setup: npm install {2}# package\.json$/m);
    expect(config).toMatch(/^gates:\n {2}- npm test {2}# package\.json scripts\.test$/m);
    expect(config).toMatch(/^ {2}- id: codex$/m);
    expect(config).toMatch(/^ {2}- id: claude$/m);
    // The user's model gateway (here: the loopback server) for the one key they have.
    server = await startModelServer([
      {
        kind: 'tool',
        command: `mkdir -p src && printf '%s' '${GREET}' > src/greet.mjs && printf '%s' "${GREET_TEST.replaceAll('"', '\\"').replaceAll('`', '\\`')}" > test/greet.test.mjs`,
        usage: USAGE,
      },
      { kind: 'message', text: 'Added greet and its test.', usage: USAGE },
    ]);
    writeFileSync(
      join(dir, '.github', 'epicflow.yml'),
      config.replace(
        "env: { ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}' }",
        "env: { ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}', ANTHROPIC_BASE_URL: '${ANTHROPIC_BASE_URL}' }",
      ),
    );
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'epicflow init');

    const env = {
      PATH,
      HOME: join(root, 'home'),
      ANTHROPIC_API_KEY: 'sk-ant-test-key',
      ANTHROPIC_BASE_URL: server.url,
      // Anything that would leave 127.0.0.1 shows up at the server as a proxy request.
      HTTPS_PROXY: server.url,
      HTTP_PROXY: server.url,
      NO_PROXY: '127.0.0.1',
    };

    // 2. doctor: one report, every problem at once; a missing key is a warning while
    // another coder is fine.
    const doctor = await epicflow(['doctor'], dir, env);
    expect(doctor).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'warning: executor "codex" (.github/epicflow.yml): ${OPENAI_API_KEY} is not set; it will be left out (coding goes to claude)',
        '0 fatal, 1 warning(s)',
        '',
      ].join('\n'),
    });

    // 3. run a plan: the story merges into the epic branch off trunk.
    writeFileSync(
      join(root, 'greet.md'),
      [
        '# Greeting',
        '',
        '```epicflow',
        'stories:',
        '  - id: greet',
        '    title: Add greet',
        '    description: Export greet(name) from src/greet.mjs returning "Hello, <name>!", with a test.',
        '    owns: [src/greet.mjs, test/greet.test.mjs]',
        "    acceptance: [\"greet('Ada') is 'Hello, Ada!'\"]",
        '```',
        '',
      ].join('\n'),
    );
    const run = await epicflow(['run', join(root, 'greet.md'), '--no-agent-user'], dir, env);
    await explainWith(server, () => {
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout).toContain('[greet] started with claude');
      expect(run.stdout).toContain('epicflow: 1 done, 0 failed, 0 waiting');
      // The lockfile `npm install` wrote is setup's: no perimeter round is paid for it.
      expect(run.stdout).toContain(
        "[greet] setup changed package-lock.json: left out of the story's commits",
      );
      expect(run.stdout.match(/round \d+: claude coding/g)).toEqual(['round 1: claude coding']);
      expect(server?.modelRequests()).toHaveLength(2);
      expect(server?.strayRequests()).toEqual([]);
    });
    expect(git(dir, 'show', 'epic/greet:src/greet.mjs')).toBe(GREET.trim());
    expect(git(dir, 'ls-tree', '-r', '--name-only', 'epic/greet').split('\n')).toEqual([
      '.github/epicflow.yml',
      '.github/workflows/epicflow-story.yml',
      '.npmrc',
      'package.json',
      'src/greet.mjs',
      'test/greet.test.mjs',
      'test/smoke.test.mjs',
    ]);
    expect(git(dir, 'merge-base', '--is-ancestor', 'trunk', 'epic/greet')).toBe('');
    // The user's checkout and branch are untouched.
    expect(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('trunk');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });
});
