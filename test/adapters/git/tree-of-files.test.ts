/**
 * A tree turned into a commit by epicflow reading the files itself (tree-of-files.ts): what
 * goes in is what `git add -A` would take — links as links, the execute bit, tracked files
 * even where ignored, no ignored file — but no repository nested in the tree, and nothing
 * of git's (a filter, an fsmonitor) runs.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Git } from '../../../src/adapters/git/git.js';
import { fixtureIn, IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

function repo(files: Record<string, string>): Fixture {
  const f = makeRepo(files);
  fixtures.push(f);
  return f;
}

/** `mode path` of every entry of a commit, sorted. */
function entries(f: Fixture, commit: string): string[] {
  return f
    .git('ls-tree', '-r', '-z', '--full-tree', commit)
    .split('\0')
    .filter((l) => l !== '')
    .map((l) => `${l.split(' ')[0] ?? ''} ${l.slice(l.indexOf('\t') + 1)}`)
    .sort();
}

describe('a tree read by epicflow and written as objects', () => {
  it('takes what add -A would: links as links, the execute bit, tracked files even where ignored', async () => {
    const f = repo({ 'README.md': 'r\n', '.gitignore': 'build/\n*.log\n' });
    f.write('build/keep.txt', 'kept\n');
    f.git('add', '-f', 'build/keep.txt');
    f.git('commit', '-q', '-m', 'tracked under an ignored folder');
    const tree = (await Git.open(f.dir, IDENTITY)).worktree(f.dir);
    f.write('build/keep.txt', 'changed\n');
    f.write('build/new.txt', 'ignored\n');
    f.write('a.log', 'ignored\n');
    f.write(':(exclude)b.log', 'ignored, whatever its name says\n');
    f.write(':x.txt', 'in\n');
    f.write('run.sh', '#!/bin/sh\n');
    chmodSync(join(f.dir, 'run.sh'), 0o755);
    f.write('.GIT/config', 'never\n');
    symlinkSync('README.md', join(f.dir, 'to-readme'));
    symlinkSync('/etc/passwd', join(f.dir, 'out'));
    expect(await tree.dirtyPaths()).toEqual([
      ':x.txt',
      'build/keep.txt',
      'out',
      'run.sh',
      'to-readme',
    ]);
    const commit = await tree.commitAll('files as they are');
    expect(commit).not.toBeNull();
    expect(entries(f, commit as string)).toEqual([
      '100644 .gitignore',
      '100644 :x.txt',
      '100644 README.md',
      '100644 build/keep.txt',
      '100755 run.sh',
      '120000 out',
      '120000 to-readme',
    ]);
    expect(f.git('cat-file', 'blob', `${commit}:out`)).toBe('/etc/passwd');
    expect(f.git('cat-file', 'blob', `${commit}:build/keep.txt`)).toBe('changed\n');
    // HEAD moved, and the tree's index stands for it: git itself sees nothing to commit.
    expect(f.git('rev-parse', 'HEAD').trim()).toBe(commit);
    expect(f.git('diff', '--cached', '--name-only')).toBe('');
    expect(await tree.isClean()).toBe(true);
    expect(await tree.commitAll('nothing')).toBeNull();
  });

  it('leaves a nested repository out, committed or not, without running its filter; keeps a gitlink of the base', async () => {
    const f = repo({ 'README.md': 'r\n', 'src/tracked/t.txt': 't\n' });
    const lib = f.git('rev-parse', 'HEAD').trim();
    f.git('update-index', '--add', '--cacheinfo', `160000,${lib},vendor/lib`);
    f.git('commit', '-q', '-m', 'a submodule');
    const base = f.git('rev-parse', 'HEAD').trim();
    const tree = (await Git.open(f.dir, IDENTITY)).worktree(f.dir);
    const marker = join(dirname(f.dir), 'filter-ran');
    const hook = `sh -c 'env > ${marker}; cat'`;
    for (const name of ['unborn', 'committed', 'tracked']) {
      const nest = fixtureIn(join(f.dir, 'src', name));
      mkdirSync(nest.dir, { recursive: true });
      nest.git('init', '-q');
      nest.write('t.txt', 'changed in a repository of its own\n');
      nest.write('.gitattributes', '* filter=x\n');
      nest.write('f.txt', 'one\n');
      if (name === 'committed') nest.commitAll('nested');
      nest.git('config', 'filter.x.clean', hook);
      nest.git('config', 'filter.x.required', 'true');
      nest.git('config', 'core.fsmonitor', hook);
      nest.write('f.txt', 'two\n');
    }
    f.write('vendor/lib/planted.txt', 'not read\n');
    f.write('src/a.txt', 'a\n');
    expect(await tree.dirtyPaths()).toEqual([
      'src/a.txt',
      'src/committed',
      'src/tracked',
      'src/unborn',
    ]);
    const told: string[] = [];
    const commit = await tree.commitAll('with nested repositories', (folders) => {
      told.push(...folders);
      return Promise.resolve();
    });
    expect(told).toEqual(['src/committed', 'src/tracked', 'src/unborn']);
    // What the base tracks in a folder that became a repository stays as the base has it.
    expect(entries(f, commit as string)).toEqual([
      '100644 README.md',
      '100644 src/a.txt',
      '100644 src/tracked/t.txt',
      '160000 vendor/lib',
    ]);
    expect(f.git('cat-file', 'blob', `${commit}:src/tracked/t.txt`)).toBe('t\n');
    expect(f.git('rev-parse', `${commit}:vendor/lib`).trim()).toBe(lib);
    expect(f.git('rev-parse', `${commit}^`).trim()).toBe(base);
    expect(existsSync(marker)).toBe(false);
  });

  it('asks whether a folder holding tracked paths is ignored where a repository nests in it', async () => {
    const f = repo({ '.gitignore': 'build/\n', 'src/lib/t.txt': 't\n' });
    f.write('build/lib/t.txt', 't\n');
    f.git('add', '-f', 'build/lib/t.txt');
    f.git('commit', '-q', '-m', 'tracked under an ignored folder');
    const tree = (await Git.open(f.dir, IDENTITY)).worktree(f.dir);
    for (const folder of ['src/lib', 'build/lib']) {
      const nest = fixtureIn(join(f.dir, folder));
      nest.git('init', '-q');
      nest.write('n.txt', 'its own\n');
    }
    f.write('src/lib/new.txt', 'not the nested one\n');
    f.write('build/lib/new.txt', 'ignored\n');
    f.write('build/other/new.txt', 'ignored\n');
    // Only the repository in the folder that is not ignored is one the story left out.
    expect(await tree.dirtyPaths()).toEqual(['src/lib']);
  });

  it('commits names as their bytes, UTF-8 or not', async () => {
    const f = repo({ 'README.md': 'r\n', 'café.txt': 'c\n' });
    const tree = (await Git.open(f.dir, IDENTITY)).worktree(f.dir);
    for (const name of ['bad-\xfe.txt', 'bad-\xff.txt']) {
      writeFileSync(Buffer.concat([Buffer.from(`${f.dir}/`), Buffer.from(name, 'latin1')]), 'x\n');
    }
    f.write('naïve.txt', 'n\n');
    // What the rest of epicflow reads: the bytes that are not UTF-8 shown as U+FFFD.
    expect(await tree.dirtyPaths()).toEqual(['bad-\uFFFD.txt', 'bad-\uFFFD.txt', 'naïve.txt']);
    const commit = await tree.commitAll('names as bytes');
    const names = execFileSync('git', ['ls-tree', '-z', '--name-only', commit as string], {
      cwd: f.dir,
    })
      .toString('latin1')
      .split('\0')
      .filter((n) => n !== '');
    const latin1 = (utf8: string): string => Buffer.from(utf8).toString('latin1');
    expect(names.sort()).toEqual(
      ['README.md', latin1('café.txt'), latin1('naïve.txt'), 'bad-\xfe.txt', 'bad-\xff.txt'].sort(),
    );
  });

  it('reads again a file rewritten with its size and times put back', async () => {
    const f = repo({ 'README.md': 'r\n', 'a.txt': 'aaaa\n' });
    const tree = (await Git.open(f.dir, IDENTITY)).worktree(f.dir);
    // Times a write can put back exactly (whole seconds).
    const file = join(f.dir, 'a.txt');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    // Files changed in the last two seconds are never taken from what was read before.
    await delay(2100);
    expect(await tree.dirtyPaths()).toEqual([]);
    const before = statSync(file, { bigint: true });
    f.write('a.txt', 'bbbb\n');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const after = statSync(file, { bigint: true });
    // All git's stat data but the change time is as it was.
    expect([after.ino, after.size, after.mtimeNs]).toEqual([
      before.ino,
      before.size,
      before.mtimeNs,
    ]);
    const commit = await tree.commitAll('same size, same times');
    expect(commit).not.toBeNull();
    expect(f.git('cat-file', 'blob', `${commit}:a.txt`)).toBe('bbbb\n');
  });
});
