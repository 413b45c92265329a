/** A read-only run's tree (a planner's): what it left behind, listed and discarded. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Git } from '../../../src/adapters/git/index.js';
import { fixtureIn, IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

let repo: Fixture | undefined;
afterEach(() => repo?.cleanup());

async function setUp(): Promise<{
  git: Git;
  base: string;
  tree: ReturnType<Git['worktree']>;
  path: string;
  t: Fixture;
}> {
  repo = makeRepo({ 'README.md': 'hello\n', 'src/a.ts': 'a\n', '.gitignore': 'dist/\n' });
  const git = await Git.open(repo.dir, IDENTITY);
  const base = await git.defaultBase();
  const path = join(repo.dir, '..', 'tree');
  await git.addWorktree(path, base);
  return { git, base, tree: git.worktree(path), path, t: fixtureIn(path) };
}

describe('a read-only tree', () => {
  it('lists the files of a commit', async () => {
    const { git, base } = await setUp();
    expect(await git.listFiles(base)).toEqual(['.gitignore', 'README.md', 'src/a.ts']);
  });

  it('lists every change from the base (commits, staged, unstaged, untracked, ignored) and puts all back', async () => {
    const { tree, base, path, t } = await setUp();
    t.write('README.md', 'changed\n');
    t.commitAll('a commit on top');
    t.write('src/a.ts', 'edited\n');
    t.write('staged.txt', 's\n');
    t.git('add', 'staged.txt');
    t.git('rm', '-q', '.gitignore');
    t.write('new/file.txt', 'n\n');
    t.write('dist/bundle.js', 'ignored\n');
    expect(await tree.changedFrom(base)).toEqual([
      '.gitignore',
      'README.md',
      'dist/bundle.js',
      'new/file.txt',
      'src/a.ts',
      'staged.txt',
    ]);
    await tree.discardTo(base);
    expect(await tree.head()).toBe(base);
    expect(await tree.changedFrom(base)).toEqual([]);
    expect(existsSync(join(path, 'dist'))).toBe(false);
    expect(existsSync(join(path, 'new'))).toBe(false);
  });

  it('moves no branch when the run checked one out in the tree', async () => {
    const { git, tree, base, t } = await setUp();
    t.git('checkout', '-q', '-b', 'planner-branch');
    t.write('x.txt', 'x\n');
    const moved = t.commitAll('work');
    expect(await tree.changedFrom(base)).toEqual(['x.txt']);
    await tree.discardTo(base);
    expect(await tree.head()).toBe(base);
    expect(await git.revParse('refs/heads/planner-branch')).toBe(moved);
    expect(t.git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('HEAD');
  });
});
