/**
 * Putting a tree back over what a hostile agent left in it: planted links, hard links, a
 * filter driver, a nested repository, a fifo, files in ignored paths. Real git, real files;
 * every folder outside the repository is one of the test's own.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { fixtureIn, IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A folder of the test's own outside the repository, holding `files`. */
function outsideFolder(files: Record<string, string> = {}): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'epicflow-outside-')));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  return dir;
}

/** A repository with an epic and a story tree, both at the first commit of `files`. */
async function trees(files: Record<string, string>, prepare?: (f: Fixture) => void) {
  const f: Fixture = makeRepo(files);
  cleanups.push(() => f.cleanup());
  prepare?.(f);
  const git = await Git.open(f.dir, IDENTITY);
  const base = await git.defaultBase();
  await git.createBranch('epic/1', base);
  await git.createBranch('story/1/s', base);
  const at = (name: string): string => join(dirname(f.dir), 'wt', name);
  await git.addWorktree(at('epic'), 'epic/1');
  await git.addWorktree(at('s'), 'story/1/s');
  const epic = git.worktree(at('epic'));
  const story = git.worktree(at('s'));
  return { f, base, epic, story, ef: fixtureIn(epic.path), sf: fixtureIn(story.path) };
}

const read = (path: string): string => readFileSync(path, 'utf8');

describe('write-back over a tree an agent wrote', () => {
  it('replaces a link to an outside folder planted where the commit has a folder, never writing through it', async () => {
    const { story, base, sf } = await trees({ 'dir/file': 'real\n', 'keep.txt': 'k\n' });
    const outside = outsideFolder({ other: 'mine\n' });
    rmSync(join(story.path, 'dir'), { recursive: true });
    symlinkSync(outside, join(story.path, 'dir'));
    await story.resetHard(base);
    expect(readdirSync(outside)).toEqual(['other']);
    expect(read(join(outside, 'other'))).toBe('mine\n');
    expect(lstatSync(join(story.path, 'dir')).isDirectory()).toBe(true);
    expect(read(join(story.path, 'dir/file'))).toBe('real\n');
    expect(await story.isClean()).toBe(true);
    expect(sf.git('status', '--porcelain').trim()).toBe('');
  });

  it('catches up over a link planted where the epic changes a folder, the outside folder untouched', async () => {
    const { story, ef, sf } = await trees({ 'dir/file': 'v1\n' });
    ef.write('dir/file', 'v2 from the epic\n');
    ef.write('dir/new', 'new\n');
    const epicSha = ef.commitAll('epic changes dir');
    const outside = outsideFolder({ file: 'outside\n' });
    sf.git('rm', '-q', '-r', 'dir');
    symlinkSync(outside, join(story.path, 'dir'));
    await story.commitAll('the agent made dir a link');
    const r = await story.catchUp(epicSha);
    expect(r.merged).toBe(true);
    expect(readdirSync(outside)).toEqual(['file']);
    expect(read(join(outside, 'file'))).toBe('outside\n');
    expect(lstatSync(join(story.path, 'dir')).isDirectory()).toBe(true);
    expect(read(join(story.path, 'dir/file'))).toBe('v2 from the epic\n');
    expect(read(join(story.path, 'dir/new'))).toBe('new\n');
  });

  it('replaces a link or a hard link planted at a file, their targets untouched', async () => {
    const { story, base } = await trees({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const outside = outsideFolder({ 'soft.txt': 'soft\n', 'hard.txt': 'hard\n' });
    rmSync(join(story.path, 'a.txt'));
    symlinkSync(join(outside, 'soft.txt'), join(story.path, 'a.txt'));
    rmSync(join(story.path, 'b.txt'));
    linkSync(join(outside, 'hard.txt'), join(story.path, 'b.txt'));
    await story.resetHard(base);
    expect(read(join(outside, 'soft.txt'))).toBe('soft\n');
    expect(read(join(outside, 'hard.txt'))).toBe('hard\n');
    expect(lstatSync(join(story.path, 'a.txt')).isFile()).toBe(true);
    expect(read(join(story.path, 'a.txt'))).toBe('a\n');
    expect(read(join(story.path, 'b.txt'))).toBe('b\n');
    expect(statSync(join(outside, 'hard.txt')).nlink).toBe(1);
  });

  it('runs no filter driver the agent configured for the files written back', async () => {
    const { story, base, sf } = await trees({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const outside = outsideFolder();
    const marker = join(outside, 'ran');
    // The agent's filter, for every file, in the repository's config and the tree's attributes.
    writeFileSync(join(story.path, '.gitattributes'), '* filter=x\n');
    sf.git('config', 'filter.x.smudge', `touch ${marker}; cat`);
    sf.git('config', 'filter.x.clean', `touch ${marker}; cat`);
    writeFileSync(join(story.path, 'a.txt'), 'changed\n');
    rmSync(join(story.path, 'b.txt'));
    await story.resetHard(base);
    await story.detachAt(base);
    expect(existsSync(marker)).toBe(false);
    expect(read(join(story.path, 'a.txt'))).toBe('a\n');
    expect(read(join(story.path, 'b.txt'))).toBe('b\n');
    expect(existsSync(join(story.path, '.gitattributes'))).toBe(false);
  });

  it('removes a repository nested in the tree whose config has a filter, without running it', async () => {
    const { story, base } = await trees({ 'sub/x.txt': 'x\n' });
    const outside = outsideFolder();
    const marker = join(outside, 'ran');
    const attacker = join(outside, 'attacker');
    mkdirSync(attacker);
    execFileSync('git', ['init', '-q', attacker]);
    execFileSync('git', ['-C', attacker, 'config', 'filter.x.smudge', `touch ${marker}; cat`]);
    execFileSync('git', ['-C', attacker, 'config', 'filter.x.clean', `touch ${marker}; cat`]);
    writeFileSync(join(story.path, 'sub/.git'), `gitdir: ${join(attacker, '.git')}\n`);
    writeFileSync(join(story.path, 'sub/.gitattributes'), '* filter=x\n');
    writeFileSync(join(story.path, 'sub/x.txt'), 'the agent\n');
    await story.resetHard(base);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(story.path, 'sub/.git'))).toBe(false);
    expect(read(join(story.path, 'sub/x.txt'))).toBe('x\n');
    expect(existsSync(join(attacker, '.git/config'))).toBe(true);
  });

  it('puts back a tracked file in an ignored folder and keeps ignored files; untracked ones go', async () => {
    const { story, base } = await trees({ '.gitignore': 'build/\n', 'a.txt': 'a\n' }, (f) => {
      f.write('build/keep.txt', 'tracked\n');
      f.git('add', '-f', 'build/keep.txt');
      f.git('commit', '-q', '--amend', '-m', 'a tracked file in an ignored folder');
    });
    const path = story.path;
    writeFileSync(join(path, 'build/keep.txt'), 'the agent\n');
    writeFileSync(join(path, 'build/junk'), 'setup output\n');
    writeFileSync(join(path, 'new.txt'), 'untracked\n');
    mkdirSync(join(path, 'empty/deeper'), { recursive: true });
    await story.resetHard(base);
    expect(read(join(path, 'build/keep.txt'))).toBe('tracked\n');
    expect(read(join(path, 'build/junk'))).toBe('setup output\n');
    expect(existsSync(join(path, 'new.txt'))).toBe(false);
    expect(existsSync(join(path, 'empty'))).toBe(false);
    expect(await story.isClean()).toBe(true);
    // Put back as checked out: ignored files go too.
    await story.discardTo(base);
    expect(existsSync(join(path, 'build/junk'))).toBe(false);
    expect(read(join(path, 'build/keep.txt'))).toBe('tracked\n');
  });

  it('removes a fifo planted at a tracked path without opening it', async () => {
    const { story, base } = await trees({ 'a.txt': 'a\n' });
    rmSync(join(story.path, 'a.txt'));
    execFileSync('mkfifo', [join(story.path, 'a.txt')]);
    execFileSync('mkfifo', [join(story.path, 'pipe')]);
    await story.resetHard(base);
    expect(lstatSync(join(story.path, 'a.txt')).isFile()).toBe(true);
    expect(read(join(story.path, 'a.txt'))).toBe('a\n');
  });

  it('writes only what differs: an unchanged file keeps its inode', async () => {
    const { story, base, sf } = await trees({ 'same.txt': 's\n', 'a.txt': 'a\n' });
    const before = statSync(join(story.path, 'same.txt')).ino;
    sf.write('a.txt', 'changed\n');
    await story.resetHard(base);
    expect(statSync(join(story.path, 'same.txt')).ino).toBe(before);
    expect(read(join(story.path, 'a.txt'))).toBe('a\n');
  });
});

describe('merges made from objects', () => {
  it('catches up taking the epic side of a conflicting hunk, both sides of the rest', async () => {
    const lines = (mid: string, first = '1', last = '9'): string =>
      `${first}\n2\n3\n4\n${mid}\n6\n7\n8\n${last}\n`;
    const { story, ef, sf } = await trees({ 'shared.txt': lines('5') });
    ef.write('shared.txt', lines('EPIC', 'epic first'));
    const epicSha = ef.commitAll('epic');
    sf.write('shared.txt', lines('STORY', '1', 'story last'));
    const r = await story.catchUp(epicSha);
    expect(r).toEqual({ merged: true, conflictsResolvedForEpic: [] });
    expect(read(join(story.path, 'shared.txt'))).toBe(lines('EPIC', 'epic first', 'story last'));
    expect(sf.git('log', '-1', '--format=%s%n%P').split('\n')[0]).toBe(
      `Catch up with the epic at ${epicSha.slice(0, 12)}`,
    );
    expect(sf.git('log', '-1', '--format=%P').trim().split(' ')[1]).toBe(epicSha);
    expect(await story.isClean()).toBe(true);
  });

  it('takes the epic side of a binary file, and of a deletion against a change, listing that one', async () => {
    const { story, ef, sf } = await trees({ 'gone.txt': 'g\n', 'bin.dat': 'b\0one\n' });
    ef.git('rm', '-q', 'gone.txt');
    ef.write('bin.dat', 'b\0epic\n');
    const epicSha = ef.commitAll('epic');
    sf.write('gone.txt', 'the story changed it\n');
    sf.write('bin.dat', 'b\0story\n');
    const r = await story.catchUp(epicSha);
    // As git's `-X theirs` did: the binary file settles, the deletion is left to the epic's side.
    expect(r).toEqual({ merged: true, conflictsResolvedForEpic: ['gone.txt'] });
    expect(existsSync(join(story.path, 'gone.txt'))).toBe(false);
    expect(read(join(story.path, 'bin.dat'))).toBe('b\0epic\n');
    expect(sf.git('ls-tree', '--name-only', 'HEAD').trim().split('\n')).toEqual(['bin.dat']);
  });

  it('says which git it needs where git is older than 2.38, the tree left as it was', async () => {
    const { story, ef, sf } = await trees({ 'a.txt': 'a\n' });
    ef.write('b.txt', 'b\n');
    const epicSha = ef.commitAll('epic');
    sf.write('a.txt', 'story\n');
    // A git of before 2.38: `merge-tree` takes no --write-tree and exits with its usage (129).
    const real = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
    const bin = outsideFolder();
    writeFileSync(
      join(bin, 'git'),
      `#!/bin/sh\nfor a; do [ "$a" = merge-tree ] && { echo "usage: git merge-tree <base-tree> <branch1> <branch2>" >&2; exit 129; }; done\nexec ${real} "$@"\n`,
      { mode: 0o755 },
    );
    const path = process.env['PATH'];
    process.env['PATH'] = `${bin}:${path ?? ''}`;
    try {
      await expect(story.catchUp(epicSha)).rejects.toThrow(
        /epicflow merges with `git merge-tree --write-tree`, which needs git 2.38 or later/,
      );
    } finally {
      process.env['PATH'] = path;
    }
    expect(read(join(story.path, 'a.txt'))).toBe('story\n');
    expect(existsSync(join(story.path, 'b.txt'))).toBe(false);
  });
});
