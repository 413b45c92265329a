/**
 * A repository of packages: an npm workspace of two packages, each with its own
 * `node --test` tests (no dependency to download). `epicflow init` writes each package's
 * gates; a scripted coder delivers a story in one package, checked with that package's
 * gates in its folder after breaking a test, which is charged in its package, while the
 * other package's gates never run for it. A go.work of two modules:
 * a story in one module runs that module's gates in its folder, never the other's.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { parseConfig } from '../../src/core/config/index.js';
import { epicflow } from '../support/cli.js';
import { describeNeeding } from '../support/needs.js';
import {
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type Script,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo | undefined;
afterEach(() => repo?.cleanup());

/** npm never reaches the network: the workspace has no dependency. */
const ENV = {
  ...process.env,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

const test = (name: string, fn: string, expr: string, expected: string): string =>
  [
    "const test = require('node:test');",
    "const assert = require('node:assert');",
    `const { ${fn} } = require('./${name}.js');`,
    `test('${fn}', () => assert.strictEqual(${expr}, ${expected}));`,
    '',
  ].join('\n');

const FILES = {
  '.gitignore': 'node_modules/\n',
  'package.json': JSON.stringify(
    { name: 'mono', private: true, workspaces: ['packages/*'] },
    null,
    2,
  ),
  'packages/api/package.json': JSON.stringify(
    { name: 'api', version: '1.0.0', scripts: { test: 'node --test' } },
    null,
    2,
  ),
  'packages/api/sum.js': 'exports.sum = (a, b) => a + b;\n',
  'packages/api/sum.test.js': test('sum', 'sum', 'sum(2, 3)', '5'),
  'packages/web/package.json': JSON.stringify(
    { name: 'web', version: '1.0.0', scripts: { test: 'node --test' } },
    null,
    2,
  ),
  'packages/web/greet.js': "exports.greet = (n) => 'hi ' + n;\n",
  'packages/web/greet.test.js': test('greet', 'greet', "greet('a')", "'hi a'"),
};

/** The workspace with its lockfile, `epicflow init`, and a scripted coder in the config. */
async function workspace(script: Script): Promise<{ r: TestRepo; config: string }> {
  const r = makeRepo(FILES);
  execFileSync('npm', ['install', '--package-lock-only'], {
    cwd: r.dir,
    env: ENV,
    stdio: 'ignore',
  });
  r.commit('lockfile');
  const init = await epicflow(['init'], r.dir, ENV);
  expect(init.code).toBe(0);
  const config = r.read('.github/epicflow.yml');
  const doc = YAML.parseDocument(config);
  doc.set(
    'executors',
    doc.createNode([{ id: 'bot', harness: 'command', command: scriptedCoder(r, 'coder', script) }]),
  );
  doc.set('fixRounds', 1);
  r.write('.github/epicflow.yml', doc.toString());
  r.commit('epicflow init');
  return { r, config };
}

// One story, in packages/api: which packages a story's `owns` touch, and that a story in the
// other package is checked with that one's gates alone, is test/core/packages.test.ts's
// ("touchedPackages", "check scopes").
const PLAN = planMarkdown([
  { id: 'api', owns: ['packages/api/mul.js', 'packages/api/mul.test.js', 'packages/api/sum.js'] },
]);

describe('an npm workspace of two packages', () => {
  it("init writes each package's gates; a story in one package is delivered under them, a broken test charged in its package and the other package not checked for it", async () => {
    const { r, config } = await workspace({
      api: {
        '1': {
          write: {
            'packages/api/mul.js': 'exports.mul = (a, b) => a * b;\n',
            'packages/api/mul.test.js': test('mul', 'mul', 'mul(2, 3)', '6'),
            'packages/api/sum.js': 'exports.sum = (a, b) => a - b;\n',
          },
        },
        '2': { write: { 'packages/api/sum.js': 'exports.sum = (a, b) => b + a;\n' } },
      },
    });
    repo = r;
    const parsed = parseConfig(config, 'x');
    expect(parsed.setup).toBe('npm ci');
    expect(parsed.packages).toEqual([
      { path: 'packages/api', gates: ['npm test'] },
      { path: 'packages/web', gates: ['npm test'] },
    ]);
    expect(config).toMatch(/^ {2}- path: packages\/api {2}# package\.json workspaces$/m);
    expect(config).toMatch(/^ {6}- npm test {2}# packages\/web\/package\.json scripts\.test$/m);

    const out = await run(r, PLAN, {}, { env: ENV });
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
    expect(out.stdout).toContain('epicflow: 1 done, 0 failed, 0 waiting');
    expect(out.stdout).not.toContain('perimeter alone');
    expect(record(r, 'api')['notes']).toContain("checks ran for packages/api (with the root's)");
    expect(showFile(r, 'epic/epic', 'packages/api/mul.js')).toContain('a * b');
    expect(showFile(r, 'epic/epic', 'packages/api/sum.js')).toContain('b + a');

    expect(out.stdout).toContain('[api] gates failed: packages/api: npm test:');
    expect(prompts(r, 'coder').filter((p) => p.prompt.includes('## The gates failed'))).toEqual([
      expect.objectContaining({ story: 'api', round: '2' }),
    ]);
    // Each story's gate logs: its own package's tests ran, never the other's.
    const gateLogs = (story: string): string => {
      const dir = join(stateDir(r), 'logs', story);
      return readdirSync(dir)
        .filter((f) => f.endsWith('-gates.log'))
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('\n');
    };
    expect(gateLogs('api')).toContain('(in packages/api)');
    expect(gateLogs('api')).toMatch(/not ok .*sum/);
    expect(gateLogs('api')).not.toContain('packages/web');
  });
});

/** A Go module of one package `name` with a function and its test (stdlib only). */
function goModule(dir: string, name: string, body: string): Record<string, string> {
  return {
    [`${dir}/go.mod`]: `module example.com/${name}\n\ngo 1.19\n`,
    [`${dir}/${name}.go`]: `package ${name}\n\n// Double of n.\nfunc Double(n int) int { ${body} }\n`,
    [`${dir}/${name}_test.go`]: `package ${name}\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n\tif Double(3) != 6 {\n\t\tt.Fatal("Double(3) is not 6")\n\t}\n}\n`,
  };
}

describeNeeding(['go'], 'a go.work of two modules', () => {
  it("a story touching one module runs that module's gates in its folder, never the other's", async () => {
    // libs/text lies two levels down outside apps/, packages/ or services/: only go.work names it.
    const r = makeRepo({
      'go.work': 'go 1.19\n\nuse (\n\t./services/api\n\t./libs/text\n)\n',
      ...goModule('services/api', 'api', 'return n * 2'),
      ...goModule('libs/text', 'text', 'return n + n'),
    });
    repo = r;
    // Nothing from the network; a workspace takes no -mod flag.
    const env = { ...process.env, GOPROXY: 'off', GOFLAGS: '' };
    const init = await epicflow(['init'], r.dir, env);
    expect(init.code).toBe(0);
    const config = r.read('.github/epicflow.yml');
    const go = ['go build ./...', 'go vet ./...', 'go test ./...'];
    expect(parseConfig(config, 'x').packages).toEqual([
      { path: 'libs/text', gates: go },
      { path: 'services/api', gates: go },
    ]);
    expect(config).toMatch(/^ {2}- path: libs\/text {2}# go\.work use$/m);
    const doc = YAML.parseDocument(config);
    const api = (body: string) => ({
      write: {
        'services/api/api.go': goModule('services/api', 'api', body)['services/api/api.go'] ?? '',
      },
    });
    doc.set(
      'executors',
      doc.createNode([
        {
          id: 'bot',
          harness: 'command',
          command: scriptedCoder(r, 'coder', {
            api: { '1': api('return n * 3'), '2': api('return n << 1') },
          }),
        },
      ]),
    );
    doc.set('fixRounds', 1);
    r.write('.github/epicflow.yml', doc.toString());
    r.commit('epicflow init');

    const out = await run(
      r,
      planMarkdown([{ id: 'api', owns: ['services/api/api.go'] }]),
      {},
      {
        env,
      },
    );
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
    expect(out.stdout).toContain('[api] gates failed: services/api: go test ./...:');
    expect(record(r, 'api')).toMatchObject({ status: 'done' });
    expect(record(r, 'api')['notes']).toContain("checks ran for services/api (with the root's)");
    const logs = join(stateDir(r), 'logs', 'api');
    const gateLogs = readdirSync(logs)
      .filter((f) => f.endsWith('-gates.log'))
      .map((f) => readFileSync(join(logs, f), 'utf8'))
      .join('\n');
    expect(gateLogs).toContain('(in services/api)');
    expect(gateLogs).toContain('Double(3) is not 6');
    expect(gateLogs).not.toContain('libs/text');
    expect(showFile(r, 'epic/epic', 'services/api/api.go')).toContain('n << 1');
  });
});
