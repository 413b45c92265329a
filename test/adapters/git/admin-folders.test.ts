/**
 * The trees as the repository's admin folders name them, read without git, give what
 * `git worktree list` gives; and a tree a run knows is added again over a stale one.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  branchAbsentFromFiles,
  branchFromFiles,
  headFromFiles,
  listTrees,
} from '../../../src/adapters/git/admin-folders.js';
import { parseWorktreeList } from '../../../src/adapters/git/listings.js';
import { Git } from '../../../src/adapters/git/git.js';
import { IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

let f: Fixture | undefined;
afterEach(() => f?.cleanup());

function gitsOwnList(fixture: Fixture) {
  return parseWorktreeList(fixture.git('worktree', 'list', '--porcelain', '-z')).map((e) => ({
    path: e.path,
    branch: e.branch,
    head: e.branch === undefined ? e.head : undefined,
    prunable: e.prunable,
  }));
}

function ours(fixture: Fixture) {
  return listTrees(fixture.dir, join(fixture.dir, '.git')).map((e) => ({
    path: e.path,
    branch: e.branch,
    head: e.head,
    prunable: e.prunable,
  }));
}

describe('listTrees', () => {
  it('names the main tree, a branch tree, a detached one and a gone one as git does', () => {
    f = makeRepo();
    const base = dirname(f.dir);
    const sha = f.git('rev-parse', 'HEAD').trim();
    f.git('branch', 'story/a');
    f.git('worktree', 'add', '-q', join(base, 'wt-a'), 'story/a');
    f.git('worktree', 'add', '-q', '--detach', join(base, 'wt-detached'), sha);
    f.git('branch', 'story/gone');
    f.git('worktree', 'add', '-q', join(base, 'wt-gone'), 'story/gone');
    rmSync(join(base, 'wt-gone'), { recursive: true, force: true });

    const listed = ours(f);
    expect(listed).toEqual(gitsOwnList(f));
    expect(listed.map((e) => [e.branch ?? e.head, e.prunable])).toEqual([
      ['refs/heads/main', false],
      ['refs/heads/story/a', false],
      [sha, false],
      ['refs/heads/story/gone', true],
    ]);
  });

  it('passes over an admin folder that names no tree (one still being written)', () => {
    f = makeRepo();
    f.git('worktree', 'add', '-q', '--detach', join(dirname(f.dir), 'wt'), 'HEAD');
    const admin = join(f.dir, '.git', 'worktrees', 'wt');
    rmSync(join(admin, 'gitdir'));
    expect(ours(f).map((e) => e.path)).toEqual([f.dir]);
  });
});

describe('Git.addWorktree without listing trees through git', () => {
  it('adds a branch tree again where a tree of it was deleted without git knowing', async () => {
    f = makeRepo();
    f.git('branch', 'story/a');
    const git = await Git.open(f.dir, IDENTITY);
    const path = join(dirname(f.dir), 'wt', 'a');
    await git.addWorktree(path, 'story/a');
    // Its folder goes behind git's back: the registration stays, stale.
    rmSync(path, { recursive: true, force: true });
    await git.addWorktree(path, 'story/a');
    writeFileSync(join(path, 'new.txt'), 'x\n');
    expect(f.git('-C', path, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/story/a');
    expect(gitsOwnList(f).filter((e) => e.prunable)).toEqual([]);
  });

  it('adds a detached tree at a commit, and refuses a name that is neither branch nor commit', async () => {
    f = makeRepo();
    const sha = f.git('rev-parse', 'HEAD').trim();
    const git = await Git.open(f.dir, IDENTITY);
    const path = join(dirname(f.dir), 'wt', 'c');
    await git.addWorktree(path, sha);
    expect(f.git('-C', path, 'rev-parse', 'HEAD').trim()).toBe(sha);
    await expect(git.addWorktree(join(dirname(f.dir), 'wt', 'd'), 'no-such-thing')).rejects.toThrow(
      'no branch or commit no-such-thing',
    );
  });
});

describe('headFromFiles', () => {
  it('reads the commit HEAD names as rev-parse does, and leaves a packed or unborn branch to git', async () => {
    f = makeRepo();
    const fixture = f;
    const base = dirname(fixture.dir);
    const common = join(fixture.dir, '.git');
    const revParse = (dir: string) => fixture.git('-C', dir, 'rev-parse', 'HEAD').trim();
    fixture.git('branch', 'story/a');
    fixture.git('worktree', 'add', '-q', join(base, 'wt-a'), 'story/a');
    fixture.git('worktree', 'add', '-q', '--detach', join(base, 'wt-d'), 'HEAD');
    const adminOf = (name: string) => join(common, 'worktrees', name);

    expect(headFromFiles(common, common)).toBe(revParse(fixture.dir));
    expect(headFromFiles(adminOf('wt-a'), common)).toBe(revParse(join(base, 'wt-a')));
    expect(headFromFiles(adminOf('wt-d'), common)).toBe(revParse(join(base, 'wt-d')));

    // A commit on the branch moves what the linked tree's HEAD names.
    writeFileSync(join(base, 'wt-a', 'b.txt'), 'b\n');
    fixture.git('-C', join(base, 'wt-a'), 'add', 'b.txt');
    fixture.git('-C', join(base, 'wt-a'), 'commit', '-q', '-m', 'b');
    expect(headFromFiles(adminOf('wt-a'), common)).toBe(revParse(join(base, 'wt-a')));

    // Packed refs: only git can tell, and the tree's head() still answers right.
    fixture.git('pack-refs', '--all');
    expect(headFromFiles(adminOf('wt-a'), common)).toBeNull();
    const git = await Git.open(fixture.dir, IDENTITY);
    expect(await git.worktree(join(base, 'wt-a')).head()).toBe(revParse(join(base, 'wt-a')));

    // An unborn branch names no commit.
    fixture.git('-C', join(base, 'wt-d'), 'checkout', '-q', '--orphan', 'fresh');
    expect(headFromFiles(adminOf('wt-d'), common)).toBeNull();
  });
});

describe('Git.revParse of HEAD and branches, read from their files', () => {
  it('answers as rev-parse does: loose, packed, moved, deleted, nested and detached', async () => {
    f = makeRepo();
    const fixture = f;
    const common = join(fixture.dir, '.git');
    const gits = (ref: string): string | null => {
      try {
        return fixture.git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`).trim();
      } catch {
        return null;
      }
    };
    const git = await Git.open(fixture.dir, IDENTITY);
    const same = async (...refs: string[]): Promise<void> => {
      for (const ref of refs) expect(await git.revParse(ref)).toBe(gits(ref));
    };
    fixture.git('branch', 'story/1/a');
    fixture.git('branch', 'packed');
    fixture.git('pack-refs', '--all');
    fixture.git('branch', '-f', 'story/1/a');
    writeFileSync(join(fixture.dir, 'c.txt'), 'c\n');
    fixture.git('add', 'c.txt');
    fixture.git('commit', '-q', '-m', 'c');
    fixture.git('branch', 'loose');
    // A loose branch is read from its file; a packed one (no file) and a missing one are git's.
    expect(branchFromFiles(common, 'refs/heads/loose')).toBe(gits('refs/heads/loose'));
    expect(branchFromFiles(common, 'refs/heads/packed')).toBeNull();
    await same('HEAD', 'refs/heads/loose', 'refs/heads/packed', 'refs/heads/story/1/a');
    await same('refs/heads/story', 'refs/heads/missing', 'refs/heads/../HEAD', 'loose');
    // No file and no line in packed-refs: missing without asking git. A packed branch, a
    // loose one and a folder of branches are not (a folder: git is asked).
    expect(branchAbsentFromFiles(common, 'refs/heads/missing')).toBe(true);
    expect(branchAbsentFromFiles(common, 'refs/heads/packed')).toBe(false);
    expect(branchAbsentFromFiles(common, 'refs/heads/loose')).toBe(false);
    expect(branchAbsentFromFiles(common, 'refs/heads/story')).toBe(false);
    // Moved and deleted by git between two reads: each read answers what git answers then.
    fixture.git('update-ref', 'refs/heads/loose', gits('refs/heads/packed') ?? '');
    fixture.git('branch', '-D', 'story/1/a');
    await same('refs/heads/loose', 'refs/heads/story/1/a');
    expect(branchAbsentFromFiles(common, 'refs/heads/story/1/a')).toBe(true);
    // Without packed-refs, a branch with no file is missing too.
    rmSync(join(common, 'packed-refs'));
    expect(branchAbsentFromFiles(common, 'refs/heads/packed')).toBe(true);
    fixture.git('branch', 'packed', 'loose');
    // A detached HEAD is the commit in its file.
    fixture.git('checkout', '-q', '--detach', 'packed');
    await same('HEAD');
  });
});
