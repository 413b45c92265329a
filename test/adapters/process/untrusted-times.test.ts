/**
 * A tree taken back from the agent user has every file's change time moved (its owner
 * changed), so epicflow's git compares the files of handed-over trees without change
 * times. What keeps that honest: taking a tree back gives every file the step changed a
 * new modification time. Here the agent changes a file and puts its size and
 * modification time back as they were; the commit after the step still has the change.
 * The test runs as root (users can be made) with a pool and folders of its own.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Git } from '../../../src/adapters/git/git.js';
import { agentUser, type Untrusted } from '../../../src/adapters/process/untrusted.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
let dir: string;
let untrusted: Untrusted;

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-times-'));
  await chmod(dir, 0o711);
  mkdirSync(join(dir, 'epicflow', 'trees'), { recursive: true });
  untrusted = await agentUser({
    user: 'epicflow-times',
    roots: [join(dir, 'epicflow')],
    home: join(dir, 'epicflow', 'homes'),
    env,
  });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a tree taken back from the agent user', () => {
  it('has a change the agent hid behind the old size and modification time committed', async () => {
    const main = join(dir, 'repo');
    mkdirSync(main);
    git(main, 'init', '-q', '-b', 'main');
    writeFileSync(join(main, 'a.txt'), 'aaaa\n');
    git(main, 'add', '-A');
    git(main, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'base');
    git(main, 'branch', 'story');
    const repo = await Git.open(main);
    repo.handsTreesOver();
    const tree = join(dir, 'epicflow', 'trees', 'story');
    await repo.addWorktree(tree, 'story');
    const step = (script: string) =>
      untrusted.runShell(script, { cwd: tree, env, timeoutMs: 30_000 });

    // A second on, a first step and its commit: the tree's index is then newer than
    // every file it knew, so git trusts what it recorded of them.
    await delay(1100);
    expect((await step('echo b > b.txt')).exitCode).toBe(0);
    expect(await repo.worktree(tree).commitAll('first')).not.toBeNull();
    const hide = [
      't=$(stat -c %y a.txt)',
      "printf 'bbbb\\n' > a.txt",
      'touch -d "$t" a.txt',
      'echo "$t"',
      'stat -c %y a.txt',
    ].join('; ');
    const hidden = await step(hide);
    expect(hidden.exitCode).toBe(0);
    // The agent did put the time back: only the taking back tells the change apart.
    const [was, is] = hidden.stdout.trim().split('\n');
    expect(is).toBe(was);
    const commit = await repo.worktree(tree).commitAll('second');
    expect(commit).not.toBeNull();
    expect(git(main, 'show', `${commit ?? ''}:a.txt`)).toBe('bbbb');
    expect(readFileSync(join(tree, 'a.txt'), 'utf8')).toBe('bbbb\n');
  }, 180_000);
});
