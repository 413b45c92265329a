/**
 * Repositories that are not a Node package, built from their real layout (a pyproject
 * with pytest, a Go module; both stdlib only): `epicflow init` finds their checks, and a
 * scripted coder delivers a two-story epic judged by them, where a coder that breaks a
 * test is charged with it and fixes it in the next round. A toolchain the gates need that
 * is not on PATH stops `doctor` and `run` before any turn, with the command that installs
 * it.
 *
 * @needs pytest go
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { parseConfig } from '../../src/core/config/index.js';
import { epicflow } from '../support/cli.js';
import {
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type Script,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** No module may come from the network: the projects are stdlib only. */
const ENV = { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod', PIP_NO_INDEX: '1' };

/** `epicflow init`, then its config with a scripted coder instead of the agents, committed. */
async function initWith(r: TestRepo, script: Script, fixRounds = 1): Promise<string> {
  const init = await epicflow(['init'], r.dir, ENV);
  expect(init).toMatchObject({ code: 0, stderr: '' });
  const coder = scriptedCoder(r, 'coder', script);
  const written = r.read('.github/epicflow.yml');
  const doc = YAML.parseDocument(written);
  doc.set('executors', doc.createNode([{ id: 'bot', harness: 'command', command: coder }]));
  doc.set('fixRounds', fixRounds);
  r.write('.github/epicflow.yml', doc.toString());
  r.commit('epicflow init');
  return written;
}

const PYPROJECT = [
  '[project]',
  'name = "shop"',
  'version = "0.1.0"',
  'requires-python = ">=3.9"',
  '',
  '[tool.pytest.ini_options]',
  'testpaths = ["tests"]',
  'pythonpath = ["."]',
  '',
].join('\n');

const PY_FILES = {
  'pyproject.toml': PYPROJECT,
  // pip's files, as most projects have them: pytest pinned for development only.
  'requirements.txt': '# the standard library only\n',
  'requirements-dev.txt': '-r requirements.txt\npytest\n',
  '.gitignore': '__pycache__/\n.pytest_cache/\n.venv/\n',
  'shop/__init__.py': '',
  'shop/price.py': 'def price(cents):\n    return cents / 100\n',
  'tests/test_price.py':
    'from shop.price import price\n\n\ndef test_price():\n    assert price(250) == 2.5\n',
};

const GO_FILES = {
  'go.mod': 'module example.com/shop\n\ngo 1.19\n',
  'price/price.go':
    'package price\n\n// Price in units of cents.\nfunc Price(cents int) float64 { return float64(cents) / 100 }\n',
  'price/price_test.go':
    'package price\n\nimport "testing"\n\nfunc TestPrice(t *testing.T) {\n\tif Price(250) != 2.5 {\n\t\tt.Fatal("Price(250) is not 2.5")\n\t}\n}\n',
};

describe('a Python project (pyproject, requirements files, pytest)', () => {
  it('init finds pytest and installs into a virtual environment in the tree; a story is charged with the test it broke and merged after its fix', async () => {
    repo = makeRepo(PY_FILES);
    const config = await initWith(repo, {
      round: {
        '1': {
          write: {
            'shop/price.py': 'def price(cents):\n    return cents // 100\n',
            'shop/tax.py': 'def tax(p):\n    return round(p * 0.2, 2)\n',
            'tests/test_tax.py':
              'from shop.tax import tax\n\n\ndef test_tax():\n    assert tax(10) == 2\n',
          },
        },
        '2': {
          write: { 'shop/price.py': 'def price(cents):\n    return round(cents / 100, 2)\n' },
        },
      },
    });
    expect(parseConfig(config, 'x')).toMatchObject({
      setup:
        'python3 -m venv --without-pip --system-site-packages .venv && (.venv/bin/python -m pip --version 2>/dev/null || .venv/bin/python -m ensurepip) >/dev/null && .venv/bin/python -m pip install -r requirements.txt -r requirements-dev.txt',
      gates: ['.venv/bin/python -m pytest'],
    });
    expect(config).toMatch(
      /^ {2}- \.venv\/bin\/python -m pytest {2}# pyproject\.toml \[tool\.pytest\.ini_options\]$/m,
    );

    const r = await run(
      repo,
      planMarkdown([{ id: 'round', owns: ['shop/price.py', 'shop/tax.py', 'tests/test_tax.py'] }]),
      {},
      { env: ENV },
    );
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain('epicflow: 1 done, 0 failed, 0 waiting');
    expect(r.stdout).not.toContain('perimeter alone');
    expect(r.stdout).toContain('[round] gates failed: .venv/bin/python -m pytest:');
    // The story's second check got the environment setup made at its first, in the same
    // folder, from the cache: the link to the system's interpreter with it.
    expect(r.stdout).toMatch(/setup came from the cache of key [0-9a-f]{12}/);
    const seen = prompts(repo, 'coder').filter((p) => p.story === 'round');
    expect(seen.map((p) => p.round)).toEqual(['1', '2']);
    expect(seen[1]?.prompt).toContain('## The gates failed');
    expect(seen[1]?.prompt).toContain('test_price');
    expect(record(repo, 'round')).toMatchObject({ status: 'done' });
    expect(showFile(repo, 'epic/epic', 'shop/tax.py')).toContain('def tax');
    expect(showFile(repo, 'epic/epic', 'shop/price.py')).toContain('round(cents / 100, 2)');
    // The merged tree passes the detected gate.
    git(repo.dir, 'checkout', '-q', 'epic/epic');
    expect(
      execFileSync('python3', ['-m', 'pytest', '-q'], {
        cwd: repo.dir,
        env: ENV,
        encoding: 'utf8',
      }),
    ).toMatch(/2 passed/);
  });
});

describe('a Go module', () => {
  // One story, as the Python project's above.
  it('init finds go build, vet and test; a story is charged with the test it broke and merged after its fix', async () => {
    repo = makeRepo(GO_FILES);
    const config = await initWith(repo, {
      round: {
        '1': {
          write: {
            'price/price.go':
              'package price\n\n// Price in units of cents.\nfunc Price(cents int) float64 { return float64(cents / 100) }\n',
          },
        },
        '2': {
          write: {
            'price/price.go':
              'package price\n\n// Price in units of cents.\nfunc Price(cents int) float64 { return float64(cents) / 100.0 }\n',
          },
        },
      },
    });
    expect(parseConfig(config, 'x')).toMatchObject({
      gates: ['go build ./...', 'go vet ./...', 'go test ./...'],
    });
    expect(parseConfig(config, 'x').setup).toBeUndefined();

    const r = await run(
      repo,
      planMarkdown([{ id: 'round', owns: ['price/price.go'] }]),
      {},
      { env: ENV },
    );
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain('epicflow: 1 done, 0 failed, 0 waiting');
    expect(reportJson(repo).stories.map((s) => [s.id, s.status])).toEqual([['round', 'done']]);
    expect(showFile(repo, 'epic/epic', 'price/price.go')).toContain('float64(cents) / 100.0');
    expect(r.stdout).toContain('[round] gates failed: go test ./...:');
    const seen = prompts(repo, 'coder').filter((p) => p.story === 'round');
    expect(seen.map((p) => p.round)).toEqual(['1', '2']);
    expect(seen[1]?.prompt).toContain('TestPrice');
  });

  it('without go on PATH: doctor and run name it, with its install, before any turn', async () => {
    repo = makeRepo(GO_FILES);
    await initWith(repo, { '*': { '*': { write: { 'x.go': 'package shop\n' } } } });
    // A PATH with node and git only.
    const bin = join(repo.tmp, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync(
      execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(),
      join(bin, 'git'),
    );
    const env = { ...ENV, PATH: bin };
    const fatal =
      'fatal: the gate "go build ./..." (.github/epicflow.yml) needs go, which is not on PATH; install it: apt-get install -y golang-go, or see https://go.dev/dl/';
    const doctor = await epicflow(['doctor'], repo.dir, env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout.split('\n')).toContain(fatal);
    const r = await run(repo, planMarkdown([{ id: 'a', owns: ['x.go'] }]), {}, { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(fatal.replace(/^fatal: /, ''));
    expect(prompts(repo, 'coder')).toEqual([]);
  });
});

/** npm never reaches the network: the app has no dependency. */
const NPM_ENV = {
  ...ENV,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

const APP_FILES = {
  '.gitignore': 'node_modules/\n',
  'README.md': '# shop\n',
  'app/package.json': JSON.stringify(
    { name: 'app', version: '1.0.0', scripts: { test: 'node --test' } },
    null,
    2,
  ),
  'app/price.js': 'exports.price = (cents) => cents / 100;\n',
  'app/price.test.js': [
    "const test = require('node:test');",
    "const assert = require('node:assert');",
    "const { price } = require('./price.js');",
    "test('price', () => assert.strictEqual(price(250), 2.5));",
    '',
  ].join('\n'),
};

describe('an app in the only folder with a package.json, under a root that is no project', () => {
  it('init writes its setup and gates run in the folder; a run without gates: detects the same and runs them for every story', async () => {
    repo = makeRepo(APP_FILES);
    execFileSync('npm', ['install', '--package-lock-only'], {
      cwd: join(repo.dir, 'app'),
      env: NPM_ENV,
      stdio: 'ignore',
    });
    repo.commit('lockfile');
    const init = await epicflow(['init'], repo.dir, NPM_ENV);
    expect(init).toMatchObject({ code: 0, stderr: '' });
    const written = parseConfig(repo.read('.github/epicflow.yml'), 'x');
    expect([written.setup, written.gates, written.packages]).toEqual([
      'cd app && npm ci',
      ['cd app && npm test'],
      undefined,
    ]);
    expect(repo.read('.github/epicflow.yml')).toMatch(
      /^ {2}- cd app && npm test {2}# app\/package\.json scripts\.test$/m,
    );

    // A config that leaves setup, gates and packages to detection, read when the run starts.
    const coder = scriptedCoder(repo, 'coder', {
      round: {
        '1': { write: { 'app/price.js': 'exports.price = (cents) => Math.floor(cents / 100);\n' } },
        '2': { write: { 'app/price.js': 'exports.price = (cents) => cents / 100 + 0;\n' } },
      },
      notes: { '*': { write: { 'docs/notes.md': '# notes\n' } } },
    });
    repo.write(
      '.github/epicflow.yml',
      YAML.stringify({
        executors: [{ id: 'bot', harness: 'command', command: coder }],
        fixRounds: 1,
      }),
    );
    repo.commit('config without gates');
    const r = await run(
      repo,
      planMarkdown([
        { id: 'round', owns: ['app/price.js'] },
        // Outside the folder: its checks run for it all the same.
        { id: 'notes', owns: ['docs/notes.md'] },
      ]),
      {},
      { env: NPM_ENV },
    );
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain('[round] gates failed: cd app && npm test:');
    expect(r.stdout).not.toContain('perimeter alone');
    expect(prompts(repo, 'coder').filter((p) => p.prompt.includes('## The gates failed'))).toEqual([
      expect.objectContaining({ round: '2' }),
    ]);
    expect(reportJson(repo).stories.map((s) => [s.id, s.status])).toEqual([
      ['round', 'done'],
      ['notes', 'done'],
    ]);
    const logs = join(stateDir(repo), 'logs', 'notes');
    const gateLog = readdirSync(logs)
      .filter((f) => f.endsWith('-gates.log'))
      .map((f) => readFileSync(join(logs, f), 'utf8'))
      .join('\n');
    expect(gateLog).toContain('cd app && npm test');
    expect(gateLog).toMatch(/^# pass 1$/m);
  });
});
