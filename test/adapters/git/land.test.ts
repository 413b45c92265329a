/** The git a landing needs: a merge left open for a coder, commits of trees, refs by CAS. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

/** main and side both changed `f.txt` (a conflict) and side added `side.txt`. */
async function diverged(): Promise<{ f: Fixture; git: Git; main: string; side: string }> {
  const f = makeRepo({ 'f.txt': 'base\n', 'g.txt': 'g\n' });
  fixtures.push(f);
  f.git('checkout', '-q', '-b', 'side');
  f.write('f.txt', 'side\n');
  f.write('side.txt', 'new\n');
  const side = f.commitAll('side');
  f.git('checkout', '-q', 'main');
  f.write('f.txt', 'main\n');
  const main = f.commitAll('main');
  return { f, git: await Git.open(f.dir, IDENTITY), main, side };
}

describe('a merge left open for a coder', () => {
  it('keeps the markers, then commits the tree as it is with both parents, moving no branch', async () => {
    const { f, git, main, side } = await diverged();
    const path = join(dirname(f.dir), 'wt', 'land');
    await git.addWorktree(path, main);
    const tree = git.worktree(path);
    expect(await tree.mergeNoCommit(side)).toEqual(['f.txt']);
    expect(readFileSync(join(path, 'f.txt'), 'utf8')).toMatch(
      /^<<<<<<< HEAD\nmain\n=======\nside\n>>>>>>> [0-9a-f]{40}\n$/,
    );
    const markers = await tree.snapshotCommit([main, side], 'Merge side\n\nEpicflow-Land: side\n');
    await tree.detachAt(markers);
    expect(f.git('rev-list', '--parents', '-n', '1', markers).trim().split(' ')).toEqual([
      markers,
      main,
      side,
    ]);
    expect(f.git('log', '-1', '--format=%B', markers).trim()).toBe(
      'Merge side\n\nEpicflow-Land: side',
    );
    expect(await git.readBlob(markers, 'f.txt')).toContain('<<<<<<< HEAD');
    expect(await git.readBlob(markers, 'side.txt')).toBe('new\n');
    expect(await git.readBlob(markers, 'missing.txt')).toBeNull();
    // The merge state is gone; no branch followed the tree.
    expect(existsSync(join(f.dir, '.git', 'worktrees', 'land', 'MERGE_HEAD'))).toBe(false);
    expect(await tree.isClean()).toBe(true);
    expect(f.git('rev-parse', 'main').trim()).toBe(main);
    expect(f.git('rev-parse', 'side').trim()).toBe(side);
  });

  it('reports a clean merge as no conflicts', async () => {
    const { f, git, main } = await diverged();
    f.git('branch', 'other', 'main~1');
    f.git('checkout', '-q', 'other');
    f.write('other.txt', 'o\n');
    const other = f.commitAll('other');
    f.git('checkout', '-q', 'main');
    const path = join(dirname(f.dir), 'wt', 'clean');
    await git.addWorktree(path, main);
    expect(await git.worktree(path).mergeNoCommit(other)).toEqual([]);
    expect(readFileSync(join(path, 'other.txt'), 'utf8')).toBe('o\n');
  });

  it('holds a tree at a commit even after something checked a branch out in it', async () => {
    const { f, git, main, side } = await diverged();
    const path = join(dirname(f.dir), 'wt', 'held');
    await git.addWorktree(path, main);
    const tree = git.worktree(path);
    // An agent checks out a branch and leaves a file: detaching moves neither.
    f.git('-C', path, 'checkout', '-q', 'side');
    f.write(join('..', 'wt', 'held', 'stray.txt'), 'x\n');
    await tree.detachAt(main);
    expect(await tree.head()).toBe(main);
    expect(f.git('-C', path, 'status', '--porcelain').trim()).toBe('');
    expect(f.git('rev-parse', 'side').trim()).toBe(side);
  });
});

describe('refs and trees without a checkout', () => {
  it('writes a commit of a tree with given parents; tells ancestors apart', async () => {
    const { f, git, main, side } = await diverged();
    const c = await git.commitTree(side, [main, side], 'Merge side into main\n');
    expect(f.git('rev-list', '--parents', '-n', '1', c).trim().split(' ')).toEqual([c, main, side]);
    expect(f.git('rev-parse', `${c}^{tree}`).trim()).toBe(
      f.git('rev-parse', `${side}^{tree}`).trim(),
    );
    expect(await git.isAncestor(main, c)).toBe(true);
    expect(await git.isAncestor(c, main)).toBe(false);
    expect(await git.isAncestor(main, main)).toBe(true);
  });

  it('finds where a branch is checked out, and moves a checkout forward only', async () => {
    const { f, git, main, side } = await diverged();
    expect(await git.checkoutOf('main')).toBe(f.dir);
    expect(await git.checkoutOf('side')).toBeNull();
    const path = join(dirname(f.dir), 'wt', 'side');
    await git.addWorktree(path, 'side');
    expect(await git.checkoutOf('side')).toBe(path);
    const merge = await git.commitTree(side, [main, side], 'merge\n');
    const checkout = git.worktree(f.dir);
    expect(await checkout.fastForward(side)).toBe(false);
    expect(await checkout.fastForward(merge)).toBe(true);
    expect(f.git('rev-parse', 'main').trim()).toBe(merge);
    expect(readFileSync(join(f.dir, 'side.txt'), 'utf8')).toBe('new\n');
  });

  it('tells changes to tracked files from untracked ones', async () => {
    const { f, git } = await diverged();
    f.write('g.txt', 'changed\n');
    f.write('untracked.txt', 'u\n');
    expect((await git.dirtyPaths(f.dir)).sort()).toEqual(['g.txt', 'untracked.txt']);
    expect(await git.dirtyPaths(f.dir, { untracked: false })).toEqual(['g.txt']);
  });
});
