/**
 * `epicflow clean` and the pruning after `epicflow land`, on real repositories: merged story
 * branches and the epic's worktrees go; an unmerged story branch stays (with its worktree)
 * unless --force, and the output says why.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { landCommand } from '../../src/cli/commands/land.js';
import { main } from '../../src/cli/program.js';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

async function deliver(): Promise<void> {
  repo = makeRepo({ 'README.md': 'x\n' });
  const coder = scriptedCoder(repo, 'coder', {
    a: { '*': { write: { 'src/a.txt': 'a\n' } } },
    b: { '*': { write: { 'src/b.txt': 'b\n' } } },
  });
  repo.write(
    'epicflow.yml',
    configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
  );
  repo.commit('config');
  const r = await run(
    repo,
    planMarkdown([
      { id: 'a', owns: ['src/a.txt'] },
      { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
    ]),
  );
  expect(r.code).toBe(0);
}

/** A story branch with a commit of its own, checked out in a worktree beside the repository. */
function unmergedStory(): string {
  const tree = join(repo.tmp, 'wip-tree');
  git(repo.dir, 'worktree', 'add', '-q', '-b', 'story/epic/wip', tree, 'epic/epic');
  writeFileSync(join(tree, 'wip.txt'), 'work in progress\n');
  git(tree, 'add', 'wip.txt');
  git(tree, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'wip');
  return tree;
}

async function clean(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['clean', '--repo', repo.dir, ...argv], {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    readStdin: async () => '',
    cwd: repo.tmp,
  });
  return { code, stdout, stderr };
}

const storyBranches = (): string =>
  git(repo.dir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/story/');
const worktreePaths = (): string[] =>
  git(repo.dir, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));

describe('epicflow clean', () => {
  it('removes the worktrees and merged story branches, keeps an unmerged one saying why', async () => {
    await deliver();
    const wip = unmergedStory();
    expect(worktreePaths().length).toBeGreaterThan(2);
    const r = await clean();
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('deleted story/epic/a (merged)\n');
    expect(r.stdout).toContain('deleted story/epic/b (merged)\n');
    expect(r.stdout).toContain(
      'kept story/epic/wip: not merged into epic/epic: its commits would be lost; --force deletes it and its worktree\n',
    );
    expect(storyBranches()).toBe('story/epic/wip');
    expect(worktreePaths()).toEqual([repo.dir, wip]);
    expect(existsSync(join(wip, 'wip.txt'))).toBe(true);
    // The epic branch and its records stay.
    expect(git(repo.dir, 'rev-parse', '--verify', '--quiet', 'epic/epic')).not.toBe('');
    expect(existsSync(join(repo.dir, '.git', 'epicflow', 'epic', 'epic.json'))).toBe(true);
  });

  it('--force deletes the unmerged branch and its worktree too', async () => {
    await deliver();
    const wip = unmergedStory();
    const r = await clean('--force', '--epic', 'epic');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`removed worktree ${wip}\n`);
    expect(r.stdout).toContain('deleted story/epic/wip (not merged: --force)\n');
    expect(storyBranches()).toBe('');
    expect(worktreePaths()).toEqual([repo.dir]);
  });

  it('an unknown epic is a usage error', async () => {
    await deliver();
    const r = await clean('--epic', 'other');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'error: no epic "other" has run in this repository\n  known epics: epic\n',
    );
  });
});

describe('epicflow land prunes what it landed', () => {
  it('the story worktrees and branches are gone after landing', async () => {
    await deliver();
    let stdout = '';
    const code = await landCommand(
      { repo: repo.dir, agentUser: false },
      { stdout: (s) => (stdout += s), stderr: () => undefined, cwd: repo.tmp },
    );
    expect(code).toBe(0);
    expect(stdout).toContain('  deleted story/epic/a (merged)\n');
    expect(storyBranches()).toBe('');
    expect(worktreePaths()).toEqual([repo.dir]);
    expect(git(repo.dir, 'show', 'main:src/b.txt')).toBe('b');
  });
});
