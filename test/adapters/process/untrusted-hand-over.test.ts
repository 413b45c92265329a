/**
 * How a tree is handed to the agent user and taken back, attacked: a file with more than
 * one name is never given nor taken (a hard link planted to a file elsewhere stays its
 * owner's, unwritable), and in the kernel sandbox, where a tree is taken back by its top
 * alone, nothing of it is reachable until it is given again — not through a hard link in
 * the agent's home, not by replacing the tree's `.git` — while what epicflow wrote there in
 * between is the agent's to change at the next step. The tests run as root (users can be
 * made) with a pool (`epicflow-handover`, …) and folders of their own.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandbox } from '../../../src/adapters/process/sandbox.js';
import { agentUser, type Untrusted } from '../../../src/adapters/process/untrusted.js';
import { describeNeeding } from '../../support/needs.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
/** A user of the machine's no one: the owner of the file an agent goes after. */
const STRANGER = 4242;
let dir: string;
let root: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-handover-'));
  await chmod(dir, 0o711);
  root = join(dir, 'epicflow');
  mkdirSync(root);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tree as `worktree add` leaves one: a `.git` file, tracked files, all epicflow's. */
function tree(name: string): string {
  const top = join(root, 'trees', name);
  mkdirSync(join(top, 'src'), { recursive: true });
  writeFileSync(join(top, '.git'), 'gitdir: /nonexistent\n');
  writeFileSync(join(top, 'src', 'tracked.txt'), 'tracked\n');
  return top;
}

/** A file of another user that everyone may write: one the kernel lets any user hard-link. */
function strangersFile(name: string): string {
  const outside = join(dir, 'outside');
  mkdirSync(outside, { recursive: true });
  const file = join(outside, name);
  writeFileSync(file, 'the stranger’s\n');
  chownSync(file, STRANGER, STRANGER);
  chmodSync(file, 0o666);
  return file;
}

describe('a file with more than one name in a handed tree', () => {
  let untrusted: Untrusted;
  beforeAll(async () => {
    untrusted = await agentUser({
      user: 'epicflow-handover',
      roots: [root],
      home: join(root, 'homes'),
      env,
    });
  });
  const step = (cwd: string, script: string) =>
    untrusted.runShell(script, { cwd, env, timeoutMs: 30_000 });

  it('is never given: a hard link planted to a file elsewhere stays its owner’s, and unwritten', async () => {
    const top = tree('planted');
    const victim = strangersFile('planted.txt');
    await chmod(victim, 0o644);
    // What an earlier step or a setup could leave: another name of a file elsewhere.
    linkSync(victim, join(top, 'src', 'planted.txt'));
    const r = await step(top, 'echo pwned > src/planted.txt; echo mine > src/tracked.txt');
    expect(r.stderr).toMatch(/Permission denied/);
    expect(readFileSync(victim, 'utf8')).toBe('the stranger’s\n');
    expect(lstatSync(victim).uid).toBe(STRANGER);
    // The rest of the tree was the agent's to write.
    expect(readFileSync(join(top, 'src', 'tracked.txt'), 'utf8')).toBe('mine\n');
  });

  it('is never taken: a hard link the agent makes to a file elsewhere leaves that file its owner’s', async () => {
    const top = tree('linked');
    const victim = strangersFile('linked.txt');
    const r = await step(top, `ln -- ${victim} src/linked.txt && echo made`);
    expect({ out: r.stdout.trim(), err: r.stderr }).toEqual({ out: 'made', err: '' });
    // The tree is epicflow's again, its name of the file a copy of its own; the stranger's
    // file is as it was.
    expect(lstatSync(join(top, 'src', 'tracked.txt')).uid).toBe(0);
    expect(lstatSync(join(top, 'src', 'linked.txt'))).toMatchObject({ uid: 0, nlink: 1 });
    expect(readFileSync(join(top, 'src', 'linked.txt'), 'utf8')).toBe('the stranger’s\n');
    expect(lstatSync(victim)).toMatchObject({ uid: STRANGER, nlink: 1 });
    expect(statSync(victim).mode & 0o7777).toBe(0o666);
  });
});

describeNeeding(['sandbox'], 'a tree taken back by its top alone (in the kernel sandbox)', () => {
  let walled: Untrusted;
  beforeAll(async () => {
    walled = await agentUser({
      user: 'epicflow-handover',
      roots: [root],
      home: join(root, 'walled-homes'),
      env,
      sandbox: await sandbox(env, join(root, 'scratch')),
    });
  });
  const home = (): string => {
    const h = join(root, 'executor-home');
    mkdirSync(h, { recursive: true });
    return h;
  };
  const step = (cwd: string, script: string) =>
    walled.runShell(script, {
      cwd,
      env: { ...env, HOME: home() },
      writable: [home()],
      seat: { scope: 'story', role: 'coder' },
      timeoutMs: 30_000,
    });

  it('is closed to the agent between steps: a hard link in its home and its own files lead nowhere', async () => {
    const top = tree('kept');
    const first = await step(
      top,
      [
        'echo made > src/new.txt',
        'mkdir -p node_modules/.cache && echo ignored > node_modules/.cache/x',
        // Each folder is a mount of its own in the sandbox: no hard link joins two of them.
        'ln src/new.txt "$HOME/new-link" 2>/dev/null && echo linked',
        'ln src/tracked.txt "$HOME/tracked-link" 2>/dev/null && echo linked',
        'chmod 777 src node_modules',
        'mv .git .git-old 2>/dev/null || echo ".git stays"',
      ].join('\n'),
    );
    expect(first.stdout.trim()).toBe('.git stays');
    // Between steps: the top is epicflow's and closed; the `.git` is as it was.
    expect(lstatSync(top).uid).toBe(0);
    expect(statSync(top).mode & 0o7777).toBe(0o700);
    expect(lstatSync(join(top, '.git')).uid).toBe(0);
    expect(lstatSync(join(top, 'src', 'new.txt')).nlink).toBe(1);
    // Outside any sandbox, the user finds no way in: not to what it made, not to its folders.
    const user = /as the user (\S+) /.exec(walled.description)?.[1] ?? '';
    const id = (flag: string): string =>
      execFileSync('id', [flag, user], { encoding: 'utf8' }).trim();
    for (const script of [
      `cat ${join(top, 'src', 'new.txt')}`,
      `echo pwned > ${join(top, 'node_modules', '.cache', 'x')}`,
    ]) {
      expect(() =>
        execFileSync(
          'setpriv',
          ['--reuid', id('-u'), '--regid', id('-g'), '--clear-groups', 'sh', '-c', script],
          { stdio: 'pipe' },
        ),
      ).toThrow(/Permission denied/);
    }

    // The same user in a step on another tree, with the same home: nothing of the first.
    const other = tree('other');
    const second = await step(
      other,
      [
        `cat ${join(top, 'src', 'new.txt')} 2>/dev/null && echo "read the tree"`,
        `echo pwned > ${join(top, 'src', 'new.txt')} 2>/dev/null && echo "wrote the tree"`,
        `echo pwned > ${join(top, 'node_modules', 'planted')} 2>/dev/null && echo "wrote the tree"`,
        'true',
      ].join('\n'),
    );
    expect(second.stdout).toBe('');
    expect(readFileSync(join(top, 'src', 'new.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(top, 'src', 'tracked.txt'), 'utf8')).toBe('tracked\n');
  });

  it('gives the agent what epicflow wrote in the tree between its steps', async () => {
    const top = tree('between');
    const first = await step(top, 'mkdir -p out && echo one > out/a.txt');
    expect(first.exitCode).toBe(0);
    // epicflow writes there between the steps (a catch-up merge, a reset), as root.
    writeFileSync(join(top, 'out', 'b.txt'), 'from epicflow\n');
    writeFileSync(join(top, 'src', 'merged.txt'), 'merged\n');
    const second = await step(
      top,
      'echo two >> out/b.txt && echo two >> src/merged.txt && echo two >> out/a.txt && echo ok',
    );
    expect(second.stdout.trim()).toBe('ok');
    expect(readFileSync(join(top, 'out', 'b.txt'), 'utf8')).toBe('from epicflow\ntwo\n');
    expect(readFileSync(join(top, 'src', 'merged.txt'), 'utf8')).toBe('merged\ntwo\n');
    expect(lstatSync(join(top, '.git')).uid).toBe(0);
  });
});
