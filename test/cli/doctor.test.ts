/**
 * `epicflow doctor`, and the same checks at the start of `epicflow run`: every problem of
 * the environment listed at once, on real repositories; run refuses (exit 2) before it
 * creates a branch or a state folder.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { epicflow, type CliRun } from '../support/cli.js';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  reportJson,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** A PATH with node and the system tools, and no agent CLI. */
const PATH = `${dirname(process.execPath)}:/usr/bin:/bin`;

function doctor(dir: string, env: Record<string, string | undefined>): Promise<CliRun> {
  return epicflow(['doctor', '--repo', dir], dir, { PATH, ...env });
}

const CODEX = [
  '  - id: codex',
  '    harness: codex',
  '    model: gpt-5.6',
  "    env: { OPENAI_API_KEY: '${OPENAI_API_KEY}' }",
].join('\n');

describe('epicflow doctor', () => {
  it('lists every fatal problem at once and exits 1', async () => {
    repo = makeRepo({ 'package.json': '{}\n' });
    repo.write(
      'epicflow.yml',
      ['executors:', CODEX, 'setup: npm ci', 'gates: [npm test]', ''].join('\n'),
    );
    repo.commit('config');
    const r = await doctor(repo.dir, {});
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      'fatal: executor "codex" (epicflow.yml): ${OPENAI_API_KEY} is not set; codex is not on PATH (install: npm install -g @openai/codex); no coder is left to write the stories',
      'fatal: setup "npm ci" (epicflow.yml) needs package-lock.json or npm-shrinkwrap.json, and the repository has none: commit one, or install without it',
      '2 fatal, 0 warning(s): epicflow run would refuse to start',
      '',
    ]);
  });

  it('an executor without its key while another coder is fine: a warning, exit 0', async () => {
    repo = makeRepo({ 'package.json': '{}\n', 'package-lock.json': '{}\n' });
    repo.write(
      'epicflow.yml',
      [
        'executors:',
        CODEX,
        '  - id: bot',
        '    harness: command',
        '    command: ["node", "-e", "0"]',
        'setup: npm ci',
        'gates: ["true"]',
        '',
      ].join('\n'),
    );
    repo.commit('config');
    const r = await doctor(repo.dir, { PATH: `${repo.tmp}:${PATH}` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'warning: executor "codex" (epicflow.yml): ${OPENAI_API_KEY} is not set; codex is not on PATH (install: npm install -g @openai/codex); it will be left out (coding goes to bot)\n',
    );
    expect(r.stdout).toContain('0 fatal, 1 warning(s)\n');
  });

  it('a lockfile that is not committed, and a branch that is not the default', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: ['node', '-e', '0'] }],
        setup: 'pnpm install --frozen-lockfile',
        gates: ['true'],
      }),
    );
    repo.commit('config');
    repo.write('pnpm-lock.yaml', 'lockfileVersion: 9\n');
    git(repo.dir, 'checkout', '-q', '-b', 'feature');
    git(repo.dir, 'symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main');
    const r = await doctor(repo.dir, {});
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      'fatal: setup "pnpm install --frozen-lockfile" (epicflow.yml) needs pnpm-lock.yaml committed: story worktrees start from commits, and it is not in HEAD',
      // The PATH has no pnpm: found before any turn, with how to install it.
      'fatal: setup "pnpm install --frozen-lockfile" (epicflow.yml) needs pnpm, which is not on PATH; install it: corepack enable pnpm, or npm install -g pnpm',
      'warning: the epic branch will start from HEAD on "feature", not from the default branch "main"',
    ]);
  });

  it('a Node other than .nvmrc asks for: fatal, with how to install it', async () => {
    repo = makeRepo({
      'package.json': '{ "scripts": { "test": "node --test" } }\n',
      '.nvmrc': '99\n',
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: ['node', '-e', '0'] }], gates: ['npm test'] }),
    );
    repo.commit('config');
    const r = await doctor(repo.dir, {});
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(
      `fatal: .nvmrc asks for Node 99, and node on PATH is ${process.version}; install it: nvm install 99, or see https://nodejs.org/en/download`,
    );
  });

  it('coders sharing one local model server: a warning naming them, the URL and the settings', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const local = (id: string, url: string): string =>
      `  - { id: ${id}, harness: command, command: [node, -e, "0"], env: { OPENAI_BASE_URL: "${url}" } }`;
    repo.write(
      'epicflow.yml',
      [
        'executors:',
        local('qwen-a', 'http://127.0.0.1:1234/v1'),
        local('qwen-b', 'http://localhost:1234/v1'),
        'gates: ["true"]',
        '',
      ].join('\n'),
    );
    repo.commit('config');
    const warning =
      'warning: coders qwen-a, qwen-b use one local model server, http://127.0.0.1:1234: up to 2 stories at once will queue on it and may run out of time; to code one story at a time there, set concurrency: 1 (or epicflow run --concurrency 1), or keep one executor on it with slots: 1';
    expect(await doctor(repo.dir, {})).toEqual({
      code: 0,
      stdout: `${warning}\n0 fatal, 1 warning(s)\n`,
      stderr: '',
    });
    // One story at a time: nothing to warn about.
    repo.write('epicflow.yml', `${repo.read('epicflow.yml')}concurrency: 1\n`);
    repo.commit('one at a time');
    expect((await doctor(repo.dir, {})).stdout).toBe(
      'ready: 2 executor(s), setup and base look fine\n',
    );
  });

  it('all well: ready, exit 0', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: ['node', '-e', '0'] }], gates: ['true'] }),
    );
    repo.commit('config');
    const r = await doctor(repo.dir, {});
    expect(r).toEqual({
      code: 0,
      stdout: 'ready: 1 executor(s), setup and base look fine\n',
      stderr: '',
    });
  });
});

describe('epicflow doctor on a root that is no project', () => {
  const PKG = JSON.stringify({ name: 'app', scripts: { test: 'node --test' } });
  const BOT = { executors: [{ id: 'bot', command: ['node', '-e', '0'] }] };

  it("the only folder with a package.json: its setup's lockfile is looked for there", async () => {
    repo = makeRepo({ 'app/package.json': PKG, 'app/package-lock.json': '{}\n' });
    repo.write('epicflow.yml', configYaml(BOT));
    repo.commit('config');
    expect(await doctor(repo.dir, {})).toEqual({
      code: 0,
      stdout: 'ready: 1 executor(s), setup and base look fine\n',
      stderr: '',
    });
    // Without it committed, the lockfile the detected `cd app && npm ci` needs is named.
    git(repo.dir, 'rm', '-q', '--cached', 'app/package-lock.json');
    git(repo.dir, 'commit', '-qm', 'no lockfile');
    const r = await doctor(repo.dir, {});
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(
      'fatal: setup "cd app && npm ci" (epicflow.yml) needs app/package-lock.json committed: story worktrees start from commits, and it is not in HEAD',
    );
  });

  it('two folders with a package.json: none is chosen, and a warning says so', async () => {
    repo = makeRepo({ 'web/package.json': PKG, 'app/package.json': PKG });
    repo.write('epicflow.yml', configYaml(BOT));
    repo.commit('config');
    const r = await doctor(repo.dir, {});
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'warning: no project at the root and a package.json in each of app/, web/: setup and gates are not run in any of them for every story (each is checked as a package when a story touches it); to run one\'s for every story, write its commands under gates:, like "cd app && npm test"',
      '0 fatal, 1 warning(s)',
      '',
    ]);
  });
});

describe('epicflow run makes the same checks first', () => {
  it('refuses with the whole list (exit 2) and creates nothing', async () => {
    repo = makeRepo({ 'package.json': '{}\n' });
    repo.write(
      'epicflow.yml',
      ['executors:', CODEX, 'setup: npm ci', 'gates: [npm test]', ''].join('\n'),
    );
    repo.commit('config');
    const r = await run(
      repo,
      planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]),
      {},
      {
        env: { PATH, HOME: repo.tmp },
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      [
        'error: epicflow cannot run here yet (epicflow doctor lists the same)',
        '  fatal: executor "codex" (epicflow.yml): ${OPENAI_API_KEY} is not set; codex is not on PATH (install: npm install -g @openai/codex); no coder is left to write the stories',
        '  fatal: setup "npm ci" (epicflow.yml) needs package-lock.json or npm-shrinkwrap.json, and the repository has none: commit one, or install without it',
        '',
      ].join('\n'),
    );
    expect(git(repo.dir, 'branch', '--list')).toBe('* main');
    expect(existsSync(join(repo.dir, '.git', 'epicflow'))).toBe(false);
  });

  it('leaves out an executor without its key, says so, and delivers with the other', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const bot = scriptedCoder(repo, 'bot', { '*': { '*': { write: { 'src/a.txt': 'a\n' } } } });
    repo.write(
      'epicflow.yml',
      [
        'executors:',
        '  - id: keyless',
        '    harness: command',
        `    command: ${JSON.stringify(bot)}`,
        '    priority: 1',
        "    env: { API_KEY: '${NOT_SET_ANYWHERE}' }",
        '  - id: bot',
        '    harness: command',
        `    command: ${JSON.stringify(bot)}`,
        '    priority: 2',
        'gates: ["true"]',
        '',
      ].join('\n'),
    );
    repo.commit('config');
    const r = await run(
      repo,
      planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]),
      {},
      {
        env: { ...process.env, NOT_SET_ANYWHERE: '' },
      },
    );
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain(
      'epicflow: warning: executor "keyless" (epicflow.yml): ${NOT_SET_ANYWHERE} is not set; it will be left out (coding goes to bot)\n',
    );
    expect(r.stdout).toContain('[a] started with bot');
  });

  it('warns at the start when stories would queue on one local model server, unless --concurrency 1', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const script = { a: { '*': { write: { 'src/a.txt': 'a\n' } } } };
    const a = scriptedCoder(repo, 'a', script);
    const b = scriptedCoder(repo, 'b', script);
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'qwen-a', command: a, model: 'lmstudio/qwen3-coder' },
          { id: 'qwen-b', command: b, model: 'lmstudio/qwen3-coder' },
        ],
        gates: ['true'],
      }),
    );
    repo.commit('config');
    const warning =
      'epicflow: warning: coders qwen-a, qwen-b use one local model server, http://127.0.0.1:1234: up to 2 stories at once will queue on it';
    const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
    const first = await run(repo, plan, { concurrency: 1 });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).not.toContain('local model server');
    const second = await run(repo, plan);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(warning);
  });

  it('no gates anywhere: says so once at the start, and on every story of the report', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const bot = scriptedCoder(repo, 'bot', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    repo.write('epicflow.yml', configYaml({ executors: [{ id: 'bot', command: bot }] }));
    repo.commit('config');
    const r = await run(
      repo,
      planMarkdown([
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'b', owns: ['src/b.txt'] },
      ]),
    );
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const warning =
      'epicflow: warning: no gates in epicflow.yml and none found in the repository: stories will be judged by the perimeter alone (each merges when it stays within its owns); add the commands that must pass to gates:\n';
    expect(r.stdout.split(warning)).toHaveLength(2);
    expect(reportJson(repo).stories.map((s) => [s.id, s.status, s.notes])).toEqual([
      ['a', 'done', ['no gates: judged by the perimeter alone']],
      ['b', 'done', ['no gates: judged by the perimeter alone']],
    ]);
    expect(readFileSync(join(stateDir(repo), 'report.md'), 'utf8')).toContain(
      'no gates: judged by the perimeter alone',
    );
  });
});
