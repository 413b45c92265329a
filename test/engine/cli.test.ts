import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statusCommand } from '../../src/cli/commands/status.js';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

function nothingCreated(r: TestRepo): void {
  expect(existsSync(join(r.dir, '.git', 'epicflow'))).toBe(false);
  expect(git(r.dir, 'branch', '--list', 'epic/*')).toBe('');
}

const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);

function withConfig(r: TestRepo): void {
  const coder = scriptedCoder(r, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
  r.write(
    'epicflow.yml',
    configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
  );
  r.commit('config');
}

describe('epicflow run: bad input exits 2 and creates nothing', () => {
  it('refuses a directory that is not a git repository', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicflow-nogit-'));
    try {
      writeFileSync(join(dir, 'epic.md'), plan);
      let stderr = '';
      const { runCommand } = await import('../../src/cli/commands/run.js');
      const code = await runCommand(
        { file: 'epic.md' },
        { stdout: () => undefined, stderr: (s) => (stderr += s), cwd: dir, isTTY: false },
      );
      expect(code).toBe(2);
      expect(stderr).toBe(
        `error: not a git repository: ${dir}\n  run epicflow inside a git repository, or pass --repo DIR\n`,
      );
      expect(existsSync(join(dir, '.git'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a missing plan file', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    let stderr = '';
    const { runCommand } = await import('../../src/cli/commands/run.js');
    const code = await runCommand(
      { file: 'missing.md', repo: repo.dir },
      { stdout: () => undefined, stderr: (s) => (stderr += s), cwd: repo.tmp, isTTY: false },
    );
    expect(code).toBe(2);
    expect(stderr).toBe('error: plan file not found: missing.md\n');
    nothingCreated(repo);
  });

  it('refuses a repository without a config', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const r = await run(repo, plan);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: no epicflow config found in ${repo.dir}\n  create .github/epicflow.yml or epicflow.yml with at least one executor, or pass --config FILE\n`,
    );
    nothingCreated(repo);
  });

  it('refuses an invalid config, naming the file and the field', async () => {
    repo = makeRepo({ 'README.md': 'x\n', 'epicflow.yml': 'executors: []\nfixRounds: many\n' });
    const r = await run(repo, plan);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: invalid config in epicflow\.yml\n/);
    expect(r.stderr).toContain('fixRounds');
    nothingCreated(repo);
  });

  it('prints every plan violation', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    const bad = planMarkdown([
      { id: 'a', owns: ['src/x'] },
      { id: 'b', owns: ['src/x/y'], dependsOn: ['nope'] },
    ]);
    const r = await run(repo, bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: invalid plan in .*epic\.md\n/);
    expect(r.stderr).toContain('  unknown-dependency: ');
    expect(r.stderr).toContain('  owns-overlap: ');
    nothingCreated(repo);
  });

  it('refuses a story preferring an executor the config does not have', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    const r = await run(repo, plan.replace('    owns:', '    executor: ghost\n    owns:'));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: invalid plan in ${join(repo.tmp, 'epic.md')}\n  story a: executor "ghost" is not a coder in epicflow.yml (coders: bot)\n`,
    );
    nothingCreated(repo);
  });

  it('refuses to start an epic from a checkout with uncommitted changes', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    repo.write('README.md', 'edited\n');
    const r = await run(repo, plan);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: the checkout in ${repo.dir} has uncommitted changes\n  the epic branch starts from HEAD, so these would not be part of it: README.md\n  commit or stash them first\n`,
    );
    nothingCreated(repo);
  });

  it('accepts an untracked plan file inside the repository', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    repo.write('docs/epic.md', plan);
    let stderr = '';
    const { runCommand } = await import('../../src/cli/commands/run.js');
    const code = await runCommand(
      { file: 'docs/epic.md' },
      { stdout: () => undefined, stderr: (s) => (stderr += s), cwd: repo.dir, isTTY: false },
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(git(repo.dir, 'log', '-1', '--format=%s', 'epic/epic')).toBe('Merge story a: Story a');
  });

  it('refuses an epic id that cannot name a branch', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    const r = await run(repo, plan, { epic: 'no spaces' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: invalid epic id "no spaces" (--epic)');
    nothingCreated(repo);
  });
});

describe('epicflow status', () => {
  it('prints the board of the epic run in this repository', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    let out = '';
    const io = {
      stdout: (s: string) => (out += s),
      stderr: (s: string) => (out += s),
      cwd: repo.dir,
      isTTY: false,
    };
    expect(await statusCommand({}, io)).toBe(0);
    expect(out).toBe('no epic has run in this repository yet\n');
    expect((await run(repo, plan)).code).toBe(0);
    out = '';
    expect(await statusCommand({ epic: 'epic' }, io)).toBe(0);
    expect(out).toContain('# Board: epic epic');
    expect(out).toMatch(/## Done \(1\)/);
    out = '';
    expect(await statusCommand({ epic: 'other' }, io)).toBe(2);
    expect(out).toBe('error: no epic "other" has run in this repository\n  known epics: epic\n');
  });
});
