/**
 * `epicflow init`: what it writes is checked the way GitHub and epicflow will read it —
 * the workflows with the Actions workflow parser, the configuration with epicflow's own
 * config parser — whatever the templates in `examples/workflows/` currently are. The label
 * is created on the GitHub double.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  convertWorkflowTemplate,
  NoOperationTraceWriter,
  parseWorkflow,
} from '@actions/workflow-parser';
import YAML from 'yaml';
import { main } from '../../src/cli/program.js';
import { parseConfig, referencedVariables } from '../../src/core/config/index.js';
import { AGENT_PRESETS, WORKFLOW_TEMPLATES } from '../../src/core/init/index.js';
import { startGitHubDouble, type GitHubDouble } from '../github-double/index.js';

const ROOT = new URL('../../', import.meta.url);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function init(
  argv: string[],
  env: Record<string, string | undefined> = {},
  cwd = tmpdir(),
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(['init', ...argv], {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    readStdin: async () => '',
    cwd,
    env,
  });
  return { code, stdout, stderr };
}

/** What init says of a repository it finds no checks in (none of these tests' concern). */
const NO_GATES =
  'warning: no gates were detected (no package.json, pyproject.toml, requirements.txt, go.mod or Cargo.toml): stories would be judged by the perimeter alone; add the commands that must pass before a story merges to gates:\n';

const dirs: string[] = [];
async function repoDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'epicflow-init-'));
  dirs.push(dir);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function version(): Promise<string> {
  return (JSON.parse(await readFile(new URL('package.json', ROOT), 'utf8')) as { version: string })
    .version;
}

type Step = {
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
};

/** A written workflow, parsed by GitHub's parser (no errors allowed) and as YAML. */
async function workflow(path: string): Promise<{ steps: Step[]; doc: Record<string, unknown> }> {
  const content = await readFile(path, 'utf8');
  const result = parseWorkflow({ name: path, content }, new NoOperationTraceWriter());
  if (result.value === undefined) throw new Error(`${path}: nothing parsed`);
  const template = await convertWorkflowTemplate(result.context, result.value);
  const errors = [...result.context.errors.getErrors(), ...(template.errors ?? [])].map((e) =>
    String((e as { message?: string }).message ?? e),
  );
  expect(errors).toEqual([]);
  const doc = YAML.parse(content) as { jobs: Record<string, { steps: Step[] }> };
  return { steps: Object.values(doc.jobs).flatMap((j) => j.steps), doc };
}

describe('agent CLI versions', () => {
  it('pins codex and claude to the versions the tests run for real', async () => {
    // The CLIs the tests run (test/support/agent-clis.ts).
    const pkg = JSON.parse(
      await readFile(new URL('../agent-clis/package.json', import.meta.url), 'utf8'),
    ) as {
      dependencies: Record<string, string>;
    };
    const pinned = Object.fromEntries(
      AGENT_PRESETS.flatMap((p) => ('npm' in p.install ? [p.install.npm] : [])).map((spec) => {
        const at = spec.lastIndexOf('@');
        return [spec.slice(0, at), spec.slice(at + 1)];
      }),
    );
    expect(pinned['@openai/codex']).toBe(pkg.dependencies['@openai/codex']);
    expect(pinned['@anthropic-ai/claude-code']).toBe(pkg.dependencies['@anthropic-ai/claude-code']);
    for (const version of Object.values(pinned)) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

/** The written config loads, its agents are installed by the story workflow and get their secrets. */
async function checkConsistent(dir: string): Promise<{ executors: string[]; secrets: string[] }> {
  const config = parseConfig(
    await readFile(join(dir, '.github/epicflow.yml'), 'utf8'),
    '.github/epicflow.yml',
  );
  const { steps } = await workflow(join(dir, '.github/workflows/epicflow-story.yml'));
  const installs = steps.map((s) => s.run ?? '').join('\n');
  const action = steps.find((s) => s.with?.['mode'] === 'story');
  const secrets = Object.entries(action?.env ?? {})
    .filter(([, v]) => v.includes('secrets.'))
    .map(([k]) => k);
  for (const executor of config.executors) {
    const preset = AGENT_PRESETS.find((p) => p.harness === executor.harness);
    const install =
      preset === undefined
        ? undefined
        : 'npm' in preset.install
          ? preset.install.npm
          : preset.install.run;
    expect([executor.id, installs.includes(install ?? '?')]).toEqual([executor.id, true]);
    for (const name of Object.values(executor.env).flatMap(referencedVariables)) {
      expect(action?.env?.[name]).toBe(`\${{ secrets.${name} }}`);
    }
  }
  return { executors: config.executors.map((e) => e.id), secrets };
}

describe('epicflow init writes the workflows and the configuration', () => {
  it('with the App: the story workflow and a codex + claude roster, the Action at the release tag', async () => {
    const dir = await repoDir({
      'package.json': '{ "name": "shop", "scripts": { "test": "jest" } }\n',
      'package-lock.json': '{}\n',
    });
    const r = await init(['--dir', dir]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('wrote     .github/workflows/epicflow-story.yml\n');
    expect(r.stdout).toContain('wrote     .github/epicflow.yml\n');
    expect(existsSync(join(dir, '.github/workflows/epicflow-orchestrate.yml'))).toBe(false);
    const { executors, secrets } = await checkConsistent(dir);
    expect(executors).toEqual(['codex', 'claude']);
    expect(secrets).toEqual(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']);
    const { steps } = await workflow(join(dir, '.github/workflows/epicflow-story.yml'));
    const major = (await version()).split('.')[0];
    const uses = steps.flatMap((s) =>
      s.uses !== undefined && /\/epicflow@/.test(s.uses) ? [s.uses] : [],
    );
    expect(uses.length).toBeGreaterThan(0);
    for (const u of uses) expect(u).toMatch(new RegExp(`^[^/]+/epicflow@v${major}$`));
    // The story's work job gets the model keys; its publish job, which runs no agent, none.
    const { doc } = await workflow(join(dir, '.github/workflows/epicflow-story.yml'));
    const { jobs } = doc as { jobs: Record<string, { steps: Step[] }> };
    const keysOf = (job: string): string[] =>
      Object.keys(jobs[job]?.steps.find((s) => s.with?.['mode'] === 'story')?.env ?? {});
    expect(keysOf('work')).toEqual(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']);
    expect(keysOf('publish')).toEqual([]);
    // A Node repository: its own checks are the gates.
    const config = YAML.parse(await readFile(join(dir, '.github/epicflow.yml'), 'utf8')) as {
      setup?: string;
      gates?: string[];
    };
    expect(config).toMatchObject({ setup: 'npm ci', gates: ['npm test'] });
    for (const s of [
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'EPICFLOW_APP_CLIENT_ID',
      'EPICFLOW_APP_PRIVATE_KEY',
    ]) {
      expect(r.stdout).toContain(s);
    }
    expect(r.stdout).toContain('Create the label "epic"');
    expect(r.stdout).toContain('Install the epicflow App');
  });

  it('app-less with gemini and aider: both workflows, their installs and only their secrets', async () => {
    const dir = await repoDir();
    const r = await init([
      '--appless',
      '--executor',
      'gemini',
      '--executor',
      'aider',
      '--dir',
      dir,
    ]);
    // Not a Node repository, nor any other it knows: no gates guessed, and it says so.
    expect(r).toMatchObject({ code: 0, stderr: NO_GATES });
    for (const t of WORKFLOW_TEMPLATES.appless) expect(existsSync(join(dir, t.target))).toBe(true);
    const orchestrate = await workflow(join(dir, '.github/workflows/epicflow-orchestrate.yml'));
    expect(orchestrate.steps.some((s) => s.with?.['mode'] === 'orchestrate')).toBe(true);
    const { executors, secrets } = await checkConsistent(dir);
    expect(executors).toEqual(['gemini', 'aider']);
    expect(secrets).toEqual(['GEMINI_API_KEY', 'OPENAI_API_KEY']);
    const { steps } = await workflow(join(dir, '.github/workflows/epicflow-story.yml'));
    const installs = steps.map((s) => s.run ?? '').join('\n');
    expect(installs).toContain('npm install -g @google/gemini-cli@0.61.0\n');
    expect(installs).toContain('pipx install aider-chat==0.86.2');
    expect(installs).not.toContain('@openai/codex');
    expect(
      parseConfig(await readFile(join(dir, '.github/epicflow.yml'), 'utf8'), 'x').gates,
    ).toEqual([]);
    expect(r.stdout).not.toContain('Install the epicflow App');
  });

  it.each(AGENT_PRESETS.map((p) => p.id))(
    'a roster entry for %s that loads and gets its secret',
    async (id) => {
      const dir = await repoDir();
      expect((await init(['--executor', id, '--dir', dir])).code).toBe(0);
      const { executors, secrets } = await checkConsistent(dir);
      expect(executors).toEqual([id]);
      expect(secrets).toEqual([AGENT_PRESETS.find((p) => p.id === id)?.secret]);
    },
  );

  it('writes into the current directory by default, and a rerun changes nothing', async () => {
    const dir = await repoDir();
    expect((await init([], {}, dir)).code).toBe(0);
    const before = await readFile(join(dir, '.github/epicflow.yml'), 'utf8');
    const again = await init([], {}, dir);
    expect(again).toMatchObject({ code: 0, stderr: NO_GATES });
    expect(again.stdout).toContain('unchanged .github/epicflow.yml\n');
    expect(await readFile(join(dir, '.github/epicflow.yml'), 'utf8')).toBe(before);
  });
});

describe('epicflow init never overwrites without --force', () => {
  it('exits 1 naming the files, and writes nothing at all', async () => {
    const mine = 'executors: []\n# my own settings\n';
    const dir = await repoDir({ '.github/epicflow.yml': mine });
    const r = await init(['--dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `error: would overwrite .github/epicflow.yml in ${dir}\n  nothing was written; pass --force to replace them\n`,
    );
    expect(r.stdout).toBe('');
    expect(await readFile(join(dir, '.github/epicflow.yml'), 'utf8')).toBe(mine);
    expect(existsSync(join(dir, '.github/workflows'))).toBe(false);
  });

  it('replaces them with --force', async () => {
    const dir = await repoDir({ '.github/workflows/epicflow-story.yml': 'name: mine\n' });
    const r = await init(['--dir', dir, '--force']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('replaced  .github/workflows/epicflow-story.yml\n');
    await checkConsistent(dir);
  });
});

describe('epicflow init refuses bad usage with exit 2, writing nothing', () => {
  it.each([
    [['--app', '--appless'], 'error: --app and --appless exclude each other\n'],
    [
      ['--executor', 'cursor'],
      'error: unknown executor "cursor"\n  --executor takes one of: codex, claude, gemini, opencode, aider\n',
    ],
    [['--executor', 'codex', '--executor', 'codex'], 'error: --executor codex is given twice\n'],
  ])('%j', async (argv, message) => {
    const dir = await repoDir();
    const r = await init([...argv, '--dir', dir]);
    expect(r).toEqual({ code: 2, stdout: '', stderr: message });
    expect(existsSync(join(dir, '.github'))).toBe(false);
  });

  it('a --dir that does not exist', async () => {
    const dir = join(await repoDir(), 'nope');
    expect(await init(['--dir', dir])).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: not a directory: ${dir}\n  --dir names the repository to write into\n`,
    });
  });

  it('a token without a repository to use it on', async () => {
    const dir = await repoDir();
    const r = await init(['--dir', dir], { GITHUB_TOKEN: 'ghp_x' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot tell which GitHub repository ${dir} is (no origin remote)`);
    expect(existsSync(join(dir, '.github'))).toBe(false);
  });
});

describe('epicflow init with a token creates the epic label, once', () => {
  let gh: GitHubDouble;
  beforeAll(async () => {
    gh = await startGitHubDouble();
    gh.seed.user({ login: 'alice', permission: 'write' });
    await gh.seed.repo({ owner: 'acme', name: 'shop', files: { 'README.md': '# shop\n' } });
  });
  afterAll(() => gh.close());

  /** A checkout whose origin is acme/shop on github.com. */
  async function checkout(): Promise<string> {
    const dir = await repoDir();
    execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', 'git@github.com:acme/shop.git']);
    execFileSync('git', [
      '-C',
      dir,
      'symbolic-ref',
      'refs/remotes/origin/HEAD',
      'refs/remotes/origin/main',
    ]);
    return dir;
  }

  it('from GITHUB_TOKEN and the origin remote; a second run finds it', async () => {
    const alice = gh.seed.user({ login: 'alice2', permission: 'write' });
    const env = { GITHUB_TOKEN: alice.token, GITHUB_API_URL: gh.url };
    const first = await init(['--dir', await checkout()], env);
    expect(first).toMatchObject({ code: 0, stderr: NO_GATES });
    expect(first.stdout).toContain('The label "epic" on acme/shop: created.');
    expect(gh.state.labels('acme', 'shop').filter((l) => l === 'epic')).toEqual(['epic']);
    const second = await init([
      '--dir',
      await checkout(),
      '--token',
      alice.token,
      '--api-url',
      gh.url,
    ]);
    expect(second.stdout).toContain('The label "epic" on acme/shop: already there.');
    expect(gh.state.labels('acme', 'shop').filter((l) => l === 'epic')).toEqual(['epic']);
  });

  it('refused by GitHub (a read-only token): exit 1 naming the failure, nothing written', async () => {
    await gh.seed.repo({ owner: 'acme', name: 'docs', files: { 'README.md': '# docs\n' } });
    const bob = gh.seed.user({ login: 'bob', permission: 'read' });
    const dir = await repoDir();
    const r = await init([
      '--dir',
      dir,
      '--github-repo',
      'acme/docs',
      '--token',
      bob.token,
      '--api-url',
      gh.url,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error: GitHub: cannot create the label "epic" in acme\/docs \(HTTP 403: /,
    );
    expect(r.stderr).toContain('nothing was written');
    expect(existsSync(join(dir, '.github'))).toBe(false);
    expect(gh.state.labels('acme', 'docs')).not.toContain('epic');
  });
});

describe("epicflow init's defaults come from the repository", () => {
  async function config(dir: string): Promise<{ setup?: string; gates?: string[] }> {
    return YAML.parse(await readFile(join(dir, '.github/epicflow.yml'), 'utf8')) as {
      setup?: string;
      gates?: string[];
    };
  }
  const withTest = (extra = ''): string =>
    `{ "name": "shop", "scripts": { "test": "vitest run" }${extra} }\n`;

  it.each([
    ['package-lock.json', { 'package-lock.json': '{}' }, 'npm ci', 'npm test'],
    ['npm-shrinkwrap.json', { 'npm-shrinkwrap.json': '{}' }, 'npm ci', 'npm test'],
    ['pnpm-lock.yaml', { 'pnpm-lock.yaml': '' }, 'pnpm install --frozen-lockfile', 'pnpm test'],
    ['yarn.lock (classic)', { 'yarn.lock': '' }, 'yarn install --frozen-lockfile', 'yarn test'],
    [
      'yarn.lock with .yarnrc.yml (berry)',
      { 'yarn.lock': '', '.yarnrc.yml': 'nodeLinker: node-modules\n' },
      'yarn install --immutable',
      'yarn test',
    ],
    ['bun.lockb', { 'bun.lockb': '' }, 'bun install --frozen-lockfile', 'bun run test'],
    ['bun.lock', { 'bun.lock': '' }, 'bun install --frozen-lockfile', 'bun run test'],
  ])('%s: its install, its test script, no warning', async (_name, files, setup, gate) => {
    const dir = await repoDir({ 'package.json': withTest(), ...files });
    const r = await init(['--dir', dir]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(await config(dir)).toMatchObject({ setup, gates: [gate] });
  });

  it('no lockfile: npm install, and a warning saying so', async () => {
    const dir = await repoDir({ 'package.json': withTest() });
    const r = await init(['--dir', dir]);
    expect(r.code).toBe(0);
    expect(await config(dir)).toMatchObject({ setup: 'npm install', gates: ['npm test'] });
    expect(r.stderr).toBe(
      'warning: no npm lockfile: setup installs with "npm install", which can resolve other versions than yours; commit a lockfile to pin them\n',
    );
  });

  it("package.json's packageManager wins (yarn 4 is berry)", async () => {
    const dir = await repoDir({
      'package.json': withTest(', "packageManager": "yarn@4.5.0"'),
      'yarn.lock': '',
    });
    const r = await init(['--dir', dir]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(await config(dir)).toMatchObject({ setup: 'yarn install --immutable' });
  });

  it('a packageManager without its lockfile: its plain install, with warnings', async () => {
    const dir = await repoDir({
      'package.json': withTest(', "packageManager": "pnpm@9.1.0"'),
      'package-lock.json': '{}',
    });
    const r = await init(['--dir', dir]);
    expect(await config(dir)).toMatchObject({ setup: 'pnpm install', gates: ['pnpm test'] });
    expect(r.stderr.split('\n').filter((l) => l.startsWith('warning: '))).toEqual([
      'warning: package.json names pnpm as its package manager, but there is a npm lockfile too: setup uses pnpm',
      'warning: no pnpm lockfile: setup installs with "pnpm install", which can resolve other versions than yours; commit a lockfile to pin them',
    ]);
  });

  it.each([
    [
      "npm's placeholder",
      '{ "scripts": { "test": "echo \\"Error: no test specified\\" && exit 1" } }',
    ],
    ['none', '{ "name": "shop" }'],
  ])('test script %s: no gates, and a warning', async (_name, pkg) => {
    const dir = await repoDir({ 'package.json': `${pkg}\n`, 'package-lock.json': '{}' });
    const r = await init(['--dir', dir]);
    expect(r.code).toBe(0);
    const written = await config(dir);
    expect(written).toMatchObject({ setup: 'npm ci', gates: [] });
    // The file still loads: epicflow's own parser takes it.
    parseConfig(await readFile(join(dir, '.github/epicflow.yml'), 'utf8'), 'x');
    expect(r.stderr).toMatch(
      /^warning: package\.json('s test script is npm's placeholder| has no test script).*no gates were written/,
    );
  });

  const PYTEST_PROJECT =
    '[project]\nname = "shop"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n';
  it.each([
    [
      'uv: uv.lock, pytest, ruff and mypy configured',
      {
        'pyproject.toml': `${PYTEST_PROJECT}\n[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n`,
        'uv.lock': 'version = 1\n',
      },
      'uv sync --locked',
      ['uv run pytest', 'uv run ruff check .', 'uv run mypy .'],
      [
        '^setup: uv sync --locked {2}# uv\\.lock$',
        '^ {2}- uv run pytest {2}# pyproject\\.toml \\[tool\\.pytest\\.ini_options\\]$',
        '^ {2}- uv run ruff check \\. {2}# pyproject\\.toml \\[tool\\.ruff\\]$',
      ],
    ],
    [
      'poetry: poetry.lock, pytest.ini, .flake8',
      {
        'pyproject.toml': '[tool.poetry]\nname = "shop"\n',
        'poetry.lock': '',
        'pytest.ini': '[pytest]\n',
        '.flake8': '[flake8]\n',
      },
      'POETRY_VIRTUALENVS_IN_PROJECT=true poetry install',
      [
        'POETRY_VIRTUALENVS_IN_PROJECT=true poetry run pytest',
        'POETRY_VIRTUALENVS_IN_PROJECT=true poetry run flake8',
      ],
      ['^ {2}- POETRY_VIRTUALENVS_IN_PROJECT=true poetry run flake8 {2}# \\.flake8$'],
    ],
    [
      'pip: requirements files, pytest listed in one',
      { 'requirements.txt': 'requests==2.32.0\n', 'requirements-dev.txt': 'pytest==8.3.0\n' },
      'python3 -m venv --without-pip --system-site-packages .venv && (.venv/bin/python -m pip --version 2>/dev/null || .venv/bin/python -m ensurepip) >/dev/null && .venv/bin/python -m pip install -r requirements.txt -r requirements-dev.txt',
      ['.venv/bin/python -m pytest'],
      ['^ {2}- \\.venv/bin/python -m pytest {2}# requirements-dev\\.txt$'],
    ],
    [
      'pip: a requirements file and unittest modules under tests/, nothing configured',
      {
        'requirements.txt': 'nltk==3.9.2\n',
        'stopwords.py': '',
        'tests/test_stopwords.py': 'import unittest\n',
      },
      'python3 -m venv --without-pip --system-site-packages .venv && (.venv/bin/python -m pip --version 2>/dev/null || .venv/bin/python -m ensurepip) >/dev/null && .venv/bin/python -m pip install -r requirements.txt pytest',
      ['.venv/bin/python -m pytest'],
      ['^ {2}- \\.venv/bin/python -m pytest {2}# tests/ test files$'],
    ],
    [
      'a pyproject without dependencies: nothing to install, pytest configured',
      { 'pyproject.toml': PYTEST_PROJECT },
      undefined,
      ['python3 -m pytest'],
      [],
    ],
    [
      'Go: go.mod',
      { 'go.mod': 'module example.com/shop\n\ngo 1.19\n' },
      undefined,
      ['go build ./...', 'go vet ./...', 'go test ./...'],
      ['^ {2}- go test \\./\\.\\.\\. {2}# go\\.mod$'],
    ],
    [
      'Rust: Cargo.toml, Cargo.lock, clippy configured',
      {
        'Cargo.toml': '[package]\nname = "shop"\n\n[lints.clippy]\npedantic = "warn"\n',
        'Cargo.lock': '',
      },
      'cargo fetch --locked',
      ['cargo test --locked', 'cargo clippy --locked --all-targets -- -D warnings'],
      [
        '^ {2}- cargo clippy --locked --all-targets -- -D warnings {2}# Cargo\\.toml \\[lints\\.clippy\\]$',
      ],
    ],
  ])('%s', async (_name, files, setup, gates, lines) => {
    const dir = await repoDir(files);
    const r = await init(['--dir', dir]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const text = await readFile(join(dir, '.github/epicflow.yml'), 'utf8');
    const loaded = parseConfig(text, 'x');
    expect({ setup: loaded.setup, gates: loaded.gates }).toEqual({ setup, gates });
    for (const line of lines) expect(text).toMatch(new RegExp(line, 'm'));
  });

  it('a Python project without a lockfile or pytest: setup installs it in a virtual environment, and two warnings', async () => {
    const dir = await repoDir({
      'pyproject.toml': '[project]\nname = "shop"\ndependencies = ["requests>=2"]\n',
    });
    const r = await init(['--dir', dir]);
    expect(await config(dir)).toMatchObject({
      setup:
        'python3 -m venv --without-pip --system-site-packages .venv && (.venv/bin/python -m pip --version 2>/dev/null || .venv/bin/python -m ensurepip) >/dev/null && .venv/bin/python -m pip install -e .',
      gates: [],
    });
    expect(r.stderr.split('\n').filter((l) => l !== '')).toEqual([
      'warning: pyproject.toml [project] dependencies: no lockfile (uv.lock, poetry.lock, pdm.lock) or requirements file pins the Python dependencies: setup installs whatever versions resolve today',
      'warning: a Python project without pytest configured (pyproject.toml [tool.pytest.ini_options], pytest.ini, conftest.py), listed, or test files under tests/: no test gate was written; add the command that runs your tests to gates:',
    ]);
  });

  it('Node and Go side by side: both setups and both sets of gates', async () => {
    const dir = await repoDir({
      'package.json': withTest(),
      'package-lock.json': '{}',
      'go.mod': 'module example.com/shop\n\ngo 1.19\n\nrequire example.com/lib v1.0.0\n',
    });
    const r = await init(['--dir', dir]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(await config(dir)).toMatchObject({
      setup: 'npm ci && go mod download',
      gates: ['npm test', 'go build ./...', 'go vet ./...', 'go test ./...'],
    });
    expect(await readFile(join(dir, '.github/epicflow.yml'), 'utf8')).toMatch(
      /^setup: npm ci && go mod download {2}# package-lock\.json, go\.mod require$/m,
    );
  });

  describe('the story workflow sets up what the gates need, actions pinned by commit', () => {
    const PINNED =
      /^\s*(-\s+)?uses: [A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/;
    /** The story's work job: the one that runs setup, the agent and the gates. */
    async function story(dir: string): Promise<{ steps: Step[]; text: string }> {
      const path = join(dir, '.github/workflows/epicflow-story.yml');
      const { doc } = await workflow(path);
      const { jobs } = doc as { jobs: Record<string, { steps: Step[] }> };
      return { steps: jobs['work']?.steps ?? [], text: await readFile(path, 'utf8') };
    }
    const uses = (steps: Step[]): string[] =>
      steps.flatMap((s) => (s.uses === undefined ? [] : [s.uses.split('@')[0] ?? '']));

    it('uv with .python-version and .nvmrc: Node from .nvmrc, then Python, then uv', async () => {
      const dir = await repoDir({
        'pyproject.toml': PYTEST_PROJECT,
        'uv.lock': 'version = 1\n',
        '.python-version': '3.12\n',
        '.nvmrc': '22\n',
      });
      expect((await init(['--dir', dir])).code).toBe(0);
      const { steps, text } = await story(dir);
      expect(uses(steps).slice(0, 4)).toEqual([
        'actions/checkout',
        'actions/setup-node',
        'actions/setup-python',
        'astral-sh/setup-uv',
      ]);
      expect(steps[1]?.with).toEqual({ 'node-version-file': '.nvmrc' });
      expect(steps[2]?.with).toEqual({ 'python-version-file': '.python-version' });
      for (const line of text
        .split('\n')
        .filter((l) => /^\s*(-\s+)?uses: (actions|astral-sh)\//.test(l)))
        expect(line).toMatch(PINNED);
    });

    it('Go: setup-go with the version go.mod names; poetry: pipx installs it', async () => {
      const dir = await repoDir({
        'go.mod': 'module example.com/shop\n\ngo 1.19\n',
        'pyproject.toml': '[tool.poetry]\nname = "shop"\n',
        'poetry.lock': '',
        'pytest.ini': '[pytest]\n',
      });
      expect((await init(['--appless', '--dir', dir])).code).toBe(0);
      const { steps, text } = await story(dir);
      expect(uses(steps)).toContain('actions/setup-go');
      expect(steps.find((s) => s.uses?.startsWith('actions/setup-go@'))?.with).toEqual({
        'go-version-file': 'go.mod',
      });
      expect(steps.find((s) => s.uses?.startsWith('actions/setup-python@'))?.with).toEqual({
        'python-version': '3.x',
      });
      expect(steps.map((s) => s.run)).toContain('pipx install poetry');
      for (const line of text.split('\n').filter((l) => /^\s*(-\s+)?uses: actions\//.test(l)))
        expect(line).toMatch(PINNED);
    });

    it('pnpm and Yarn 2+ are set up through corepack; npm and Yarn 1 are on every runner', async () => {
      const corepack = async (files: Record<string, string>): Promise<string[]> => {
        const dir = await repoDir(files);
        expect((await init(['--appless', '--dir', dir])).code).toBe(0);
        const { steps } = await story(dir);
        return steps.flatMap((s) => (s.run?.includes('corepack') === true ? [s.run] : []));
      };
      const pkg = (extra = '') => `{ "name": "shop", "scripts": { "test": "vitest" }${extra} }\n`;
      expect(await corepack({ 'package.json': pkg(), 'pnpm-lock.yaml': '' })).toEqual([
        'npm install -g corepack && corepack enable pnpm',
      ]);
      expect(
        await corepack({
          'package.json': pkg(),
          'yarn.lock': '',
          '.yarnrc.yml': 'nodeLinker: node-modules\n',
        }),
      ).toEqual(['npm install -g corepack && corepack enable yarn']);
      expect(await corepack({ 'package.json': pkg(), 'yarn.lock': '' })).toEqual([]);
      expect(await corepack({ 'package.json': pkg(), 'bun.lock': '' })).toEqual([]);
      expect(await corepack({ 'package.json': pkg(), 'package-lock.json': '{}' })).toEqual([]);
    });

    it('bun: setup-bun, pinned, with the version .bun-version names when there is one', async () => {
      const bun = async (files: Record<string, string>): Promise<Step[]> => {
        const dir = await repoDir(files);
        expect((await init(['--appless', '--dir', dir])).code).toBe(0);
        const { steps, text } = await story(dir);
        for (const line of text.split('\n').filter((l) => /^\s*(-\s+)?uses: oven-sh\//.test(l)))
          expect(line).toMatch(PINNED);
        return steps.filter((s) => s.uses?.startsWith('oven-sh/setup-bun@') === true);
      };
      const pkg = '{ "name": "shop", "scripts": { "test": "bun test" } }\n';
      expect(await bun({ 'package.json': pkg, 'bun.lock': '' })).toEqual([
        { uses: expect.stringMatching(/^oven-sh\/setup-bun@[0-9a-f]{40}$/) },
      ]);
      expect(
        await bun({ 'package.json': pkg, 'bun.lock': '', '.bun-version': '1.2.20\n' }),
      ).toEqual([expect.objectContaining({ with: { 'bun-version-file': '.bun-version' } })]);
      expect(await bun({ 'package.json': pkg, 'package-lock.json': '{}' })).toEqual([]);
    });

    it('a Cargo workspace and a go.work: each member a package; setup-go reads go.work', async () => {
      const dir = await repoDir({
        'go.work': 'go 1.19\n\nuse ./tools/go/gen\n',
        'tools/go/gen/go.mod': 'module example.com/gen\n\ngo 1.19\n',
        'Cargo.toml': '[workspace]\nmembers = ["crates/*"]\n',
        'Cargo.lock': 'version = 3\n',
        'crates/core/Cargo.toml': '[package]\nname = "core"\n',
      });
      const r = await init(['--appless', '--dir', dir]);
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain('no gates were detected');
      const config = await readFile(join(dir, '.github/epicflow.yml'), 'utf8');
      expect(parseConfig(config, 'x')).toMatchObject({
        setup: 'cargo fetch --locked',
        gates: [],
        packages: [
          { path: 'crates/core', gates: ['cargo test --locked'] },
          { path: 'tools/go/gen', gates: ['go build ./...', 'go vet ./...', 'go test ./...'] },
        ],
      });
      expect(config).toMatch(/^ {2}- path: crates\/core {2}# Cargo\.toml \[workspace\] members$/m);
      expect(config).toMatch(/^ {2}- path: tools\/go\/gen {2}# go\.work use$/m);
      const { steps } = await story(dir);
      expect(steps.find((s) => s.uses?.startsWith('actions/setup-go@'))?.with).toEqual({
        'go-version-file': 'go.work',
      });
    });

    it('a Node repository: the template as it is, no toolchain added', async () => {
      const dir = await repoDir({ 'package.json': withTest(), 'package-lock.json': '{}' });
      expect((await init(['--dir', dir])).code).toBe(0);
      const { steps } = await story(dir);
      expect(uses(steps).filter((u) => u.startsWith('actions/setup-'))).toEqual([
        'actions/setup-node',
      ]);
      expect(steps[1]?.with).toEqual({ 'node-version': 24 });
    });
  });

  async function orchestrateBranches(dir: string): Promise<unknown> {
    const { doc } = await workflow(join(dir, '.github/workflows/epicflow-orchestrate.yml'));
    return (doc['on'] as { push: { branches: unknown } }).push.branches;
  }

  it("the default branch is origin/HEAD's", async () => {
    const dir = await repoDir();
    execFileSync('git', ['-C', dir, 'checkout', '-q', '-b', 'feature']);
    execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', 'https://github.com/acme/shop.git']);
    execFileSync('git', [
      '-C',
      dir,
      'symbolic-ref',
      'refs/remotes/origin/HEAD',
      'refs/remotes/origin/trunk',
    ]);
    const r = await init(['--appless', '--dir', dir]);
    expect(r).toMatchObject({ code: 0, stderr: NO_GATES });
    expect(await orchestrateBranches(dir)).toEqual(['trunk']);
  });

  it('without origin/HEAD: the current branch, with a warning', async () => {
    const dir = await repoDir();
    execFileSync('git', ['-C', dir, 'checkout', '-q', '-b', 'develop']);
    execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', 'https://github.com/acme/shop.git']);
    const r = await init(['--appless', '--dir', dir]);
    expect(r.code).toBe(0);
    expect(await orchestrateBranches(dir)).toEqual(['develop']);
    expect(r.stderr).toBe(
      `${NO_GATES}warning: origin/HEAD is not set: taking the current branch "develop" as the default branch (git remote set-head origin --auto sets it)\n`,
    );
  });

  it('not a git repository: main, with a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'epicflow-init-nogit-'));
    dirs.push(dir);
    const r = await init(['--appless', '--dir', dir]);
    expect(r.code).toBe(0);
    expect(await orchestrateBranches(dir)).toEqual(['main']);
    expect(r.stderr).toContain(
      'warning: not a git repository: taking "main" as the default branch',
    );
  });
});
