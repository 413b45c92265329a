/**
 * Where epicflow is root and every step runs in the kernel sandbox as the run's agent user,
 * a tree epicflow makes for a step is checked out by git running as that user: its files
 * are the agent's from the start, and no `chown` of every file gives it over. What stays
 * epicflow's: the tree's top, its `.git` file, the admin folder and the index. The tests
 * run as root (users can be made) with folders of their own.
 *
 * @needs root sandbox
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { sandbox } from '../../../src/adapters/process/sandbox.js';
import { agentUser, type Untrusted } from '../../../src/adapters/process/untrusted.js';
import { userAclEntries } from '../../support/acl.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
let dir: string;
let root: string;
let repo: string;
let untrusted: Untrusted;

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8' });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-tree-writer-'));
  await chmod(dir, 0o711);
  root = join(dir, 'epicflow');
  repo = join(dir, 'repo');
  mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
  writeFileSync(join(repo, 'src', 'deep', 'a.txt'), 'a\n');
  writeFileSync(join(repo, 'run.sh'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
  execFileSync('ln', ['-s', 'src/deep/a.txt', join(repo, 'link')]);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'base');
  git(repo, 'branch', 'story');
  untrusted = await agentUser({
    user: 'epicflow-treewriter',
    roots: [root],
    home: join(root, 'homes'),
    env,
    sandbox: await sandbox(env, join(root, 'scratch')),
  });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ownerOf = (path: string): number => lstatSync(path).uid;

describe('a tree written as the agent user (root, in the kernel sandbox)', () => {
  it('holds the commit as a checkout would, its files the agent’s, its top, .git and index epicflow’s', async () => {
    const writer = untrusted.writer;
    expect(writer).toBeDefined();
    const agent = writer?.uid ?? -1;
    expect(agent).not.toBe(0);
    const opened = await Git.open(repo);
    const tree = join(root, 'trees', 's1');
    await opened.addWorktree(tree, 'story', writer);

    for (const path of ['src', 'src/deep', 'src/deep/a.txt', 'run.sh', 'link']) {
      expect({ path, owner: ownerOf(join(tree, path)) }).toEqual({ path, owner: agent });
    }
    expect(ownerOf(tree)).toBe(0);
    expect(ownerOf(join(tree, '.git'))).toBe(0);
    const admin = join(repo, '.git', 'worktrees', 's1');
    expect(ownerOf(join(admin, 'index'))).toBe(0);
    expect(ownerOf(admin)).toBe(0);
    // Exactly the commit: modes, links and content, and git sees no change from its index.
    expect(statSync(join(tree, 'run.sh')).mode & 0o111).not.toBe(0);
    expect(lstatSync(join(tree, 'link')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(tree, 'link'), 'utf8')).toBe('a\n');
    expect(git(tree, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(git(tree, 'rev-parse', 'HEAD')).toBe(git(repo, 'rev-parse', 'main'));

    // The agent's step writes and adds in it; no scratch folder of the writer is left.
    const step = await untrusted.runShell(
      'echo changed > src/deep/a.txt && mkdir -p src/deep/new && echo n > src/deep/new/b.txt && echo ok',
      { cwd: tree, env, seat: { scope: 's1', role: 'coder' }, timeoutMs: 30_000 },
    );
    expect({ out: step.stdout.trim(), err: step.stderr }).toEqual({ out: 'ok', err: '' });
    expect(readFileSync(join(tree, 'src', 'deep', 'a.txt'), 'utf8')).toBe('changed\n');
    expect(
      execFileSync('find', [join(root, 'homes'), '-name', 'scratch'], { encoding: 'utf8' }),
    ).toBe('');
  });

  it('is written as the agent user below a folder closed to others, which stays closed to it', async () => {
    // The repository and its trees below a home, or /root: git reaches them as the agent
    // user through a mount namespace of its own; no entry of its is set on the folder.
    const home = join(dir, 'home');
    mkdirSync(home);
    const closed = join(home, 'repo');
    git(dir, 'clone', '-q', repo, closed);
    chmodSync(home, 0o700);
    const opened = await Git.open(closed);
    const tree = join(home, 'trees', 'story');
    await opened.addWorktree(tree, git(closed, 'rev-parse', 'HEAD').trim(), untrusted.writer);
    expect(ownerOf(join(tree, 'src', 'deep', 'a.txt'))).toBe(untrusted.writer?.uid);
    expect(git(tree, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(userAclEntries(home)).toEqual([]);
    expect(statSync(home).mode & 0o777).toBe(0o700);
  });

  it('is checked out by epicflow itself where the agent user cannot read the objects', async () => {
    const closed = join(dir, 'closed');
    git(dir, 'clone', '-q', repo, closed);
    git(closed, 'gc', '-q');
    // The pack folder closed to others (a repository made under umask 077): git as the
    // agent cannot read the commit.
    chmodSync(join(closed, '.git', 'objects', 'pack'), 0o700);
    const opened = await Git.open(closed);
    const tree = join(root, 'trees', 'closed');
    // A commit: a detached tree, as the gates' checkouts are.
    await opened.addWorktree(tree, git(closed, 'rev-parse', 'HEAD').trim(), untrusted.writer);
    expect(ownerOf(join(tree, 'src', 'deep', 'a.txt'))).toBe(0);
    expect(git(tree, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readFileSync(join(tree, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho ran\n');
  });
});
