import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statusCommand } from '../../src/cli/commands/status.js';
import { renderFailure } from '../../src/cli/context.js';
import { main } from '../../src/cli/program.js';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  reportJson,
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
      // Through main, as a user runs it: the command's error is rendered there, once.
      const code = await main(['run', 'epic.md', '--no-agent-user', '--no-sandbox'], {
        stdout: () => undefined,
        stderr: (s) => (stderr += s),
        readStdin: async () => '',
        cwd: dir,
        isTTY: false,
      });
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
    const code = await main(
      ['run', 'missing.md', '--repo', repo.dir, '--no-agent-user', '--no-sandbox'],
      {
        stdout: () => undefined,
        stderr: (s) => (stderr += s),
        readStdin: async () => '',
        cwd: repo.tmp,
        isTTY: false,
      },
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
      { file: 'docs/epic.md', agentUser: false, sandbox: false },
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
  function statusIo(isTTY: boolean): {
    io: Parameters<typeof statusCommand>[1];
    out: () => string;
    reset: () => void;
  } {
    let out = '';
    return {
      io: {
        stdout: (s: string) => (out += s),
        stderr: (s: string) => (out += s),
        cwd: repo.dir,
        isTTY,
      },
      out: () => out,
      reset: () => (out = ''),
    };
  }

  it('prints the markdown board on a terminal, plain lines otherwise', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    const pipe = statusIo(false);
    expect(await statusCommand({}, pipe.io)).toBe(0);
    expect(pipe.out()).toBe('no epic has run in this repository yet\n');
    const twoStories = planMarkdown(
      [
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
      ],
      'Checkout <b>rewrite</b>',
    );
    expect((await run(repo, twoStories)).code).toBe(1);
    pipe.reset();
    expect(await statusCommand({ epic: 'epic' }, pipe.io)).toBe(0);
    const lines = pipe.out().split('\n');
    expect(lines[0]).toBe('epic epic (epic/epic): Checkout <b>rewrite</b>');
    expect(lines[1]).toMatch(/^1 done, 1 failed, 0 waiting, 0 active, 0 planned$/);
    expect(lines[2]).toBe('done    a  bot  Story a');
    expect(lines[3]).toMatch(/^failed {2}b {2}bot {2}Story b — .+/);
    expect(pipe.out()).not.toMatch(/[#`*_]|&lt;/);
    expect(pipe.out()).not.toContain('\u001b');
    const tty = statusIo(true);
    expect(await statusCommand({ epic: 'epic' }, tty.io)).toBe(0);
    expect(tty.out()).toContain('# Board: epic epic');
    expect(tty.out()).toMatch(/## Done \(1\)/);
    pipe.reset();
    // What `main` does with a command's error: the one rendering, the exit code.
    expect(
      await statusCommand({ epic: 'other' }, pipe.io).catch((e: unknown) =>
        renderFailure(pipe.io, e),
      ),
    ).toBe(2);
    expect(pipe.out()).toBe(
      'error: no epic "other" has run in this repository\n  known epics: epic\n',
    );
  });

  it('--json prints the report.json shape', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    withConfig(repo);
    expect((await run(repo, plan)).code).toBe(0);
    const pipe = statusIo(false);
    expect(await statusCommand({ json: true }, pipe.io)).toBe(0);
    const json = JSON.parse(pipe.out()) as Record<string, unknown> & {
      stories: Record<string, unknown>[];
    };
    expect(json).toMatchObject({ version: 1, epic: 'epic', epicBranch: 'epic/epic' });
    expect(json.stories).toHaveLength(1);
    expect(json.stories[0]).toMatchObject({
      id: 'a',
      status: 'done',
      branch: 'story/epic/a',
      executor: 'bot',
      reason: null,
    });
    expect(json.stories[0]?.['usage']).toMatchObject({ measured: expect.any(Object) });
    // The same stories as the run's report.json.
    expect(json.stories).toEqual(reportJson(repo).stories);
  });
});
