/**
 * What untrusted code is handed, and what it leaves: only folders strictly inside
 * epicflow's own folders are ever given to the agent user (giving chowns recursively),
 * every one of them is epicflow's again once the step ended, and nothing it scheduled
 * (a crontab, an at job) survives the step. The tests run as root, so users can be made
 * here; these use a pool of their own (`epicflow-grants`, `-2`, …) and folders of the
 * test's own making, never a shared one.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandbox } from '../../../src/adapters/process/sandbox.js';
import { agentUser, type Untrusted } from '../../../src/adapters/process/untrusted.js';
import { describeNeeding } from '../../support/needs.js';
import { userAclEntries } from '../../support/acl.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
let dir: string;
let root: string;
let outside: string;
let untrusted: Untrusted;
let user: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-grants-'));
  await chmod(dir, 0o711);
  root = join(dir, 'epicflow');
  outside = join(dir, 'outside');
  mkdirSync(join(root, 'trees', 'a'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'victim.txt'), 'victim\n');
  untrusted = await agentUser({
    user: 'epicflow-grants',
    roots: [root],
    home: join(root, 'homes'),
    env,
  });
  user = /as the user (\S+) /.exec(untrusted.description)?.[1] ?? '';
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const step = (cwd: string, script: string, writable: string[] = []) =>
  untrusted.runShell(script, { cwd, env, timeoutMs: 30_000, writable });

describe('what untrusted code is handed', () => {
  it('refuses any folder outside epicflow’s own, a root itself, and a link that leads out', async () => {
    for (const cwd of [outside, root, tmpdir(), '/']) {
      await expect(step(cwd, 'true')).rejects.toThrow(
        `refusing to hand ${cwd} to untrusted code: it is not inside epicflow's own folders`,
      );
    }
    symlinkSync(outside, join(root, 'trees', 'link'));
    await expect(
      step(join(root, 'trees', 'a'), 'true', [join(root, 'trees', 'link')]),
    ).rejects.toThrow(`refusing to hand ${join(root, 'trees', 'link')} to untrusted code`);
    // Nothing was given away meanwhile.
    expect(lstatSync(outside).uid).toBe(0);
    expect(lstatSync(join(outside, 'victim.txt')).uid).toBe(0);
  });

  it('hands a folder for the step and takes it back, with everything the step made in it', async () => {
    const tree = join(root, 'trees', 'a');
    const r = await step(
      tree,
      'id -un > mine.txt && mkdir -p deep/er && echo x > deep/er/f && chmod 000 deep/er && chmod 400 mine.txt',
    );
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(tree, 'mine.txt'), 'utf8').trim()).toBe(user);
    for (const p of [
      tree,
      join(tree, 'mine.txt'),
      join(tree, 'deep', 'er'),
      join(tree, 'deep', 'er', 'f'),
    ]) {
      expect({ p, uid: lstatSync(p).uid }).toEqual({ p, uid: 0 });
    }
    // epicflow's own user may write there again, whatever modes the step left.
    expect(lstatSync(join(tree, 'deep', 'er')).mode & 0o700).toBe(0o700);
  });

  it('without setfacl, opens the folders above its tree to all users, and says so', async () => {
    // A PATH with every tool of /usr/bin but setfacl (the package acl not installed), and the
    // system's own (useradd makes the user on a machine where it does not exist yet).
    const bin = join(dir, 'bin-without-acl');
    mkdirSync(bin);
    for (const tool of readdirSync('/usr/bin')) {
      if (tool !== 'setfacl') symlinkSync(join('/usr/bin', tool), join(bin, tool));
    }
    const closed = join(dir, 'closed');
    mkdirSync(join(closed, 'epicflow', 'tree'), { recursive: true, mode: 0o700 });
    await chmod(closed, 0o700);
    const plain = { PATH: `${bin}:/usr/sbin:/sbin` };
    const open = await agentUser({
      user: 'epicflow-grants',
      roots: [join(closed, 'epicflow')],
      home: join(closed, 'epicflow', 'homes'),
      env: plain,
    });
    expect(open.description).toContain(
      'the folders above its trees are opened to all users (install the acl package to open them to it alone)',
    );
    expect(untrusted.description).not.toContain('opened to all users');
    const r = await open.runShell('id -un > mine.txt', {
      cwd: join(closed, 'epicflow', 'tree'),
      env: plain,
      timeoutMs: 30_000,
    });
    expect(r.exitCode).toBe(0);
    expect(statSync(closed).mode & 0o001).toBe(0o001);
  });
});

describeNeeding(['sandbox'], 'in the kernel sandbox', () => {
  it('finds its tree and its tools below a folder closed to others, which stays closed to it', async () => {
    // The tree and a tool folder below one folder closed to others (a home, /root): root
    // hands them to the step through a mount namespace of its own (the closed folder
    // covered, the tree and the tools bound again below it), no entry of the agent user's
    // set on the folder.
    const closed = join(dir, 'closed-home');
    mkdirSync(join(closed, 'epicflow', 'tree'), { recursive: true });
    mkdirSync(join(closed, 'tools'), { mode: 0o755 });
    writeFileSync(join(closed, 'tools', 'my-tool'), '#!/bin/sh\necho tool ran\n', { mode: 0o755 });
    await chmod(closed, 0o700);
    const walled = await agentUser({
      user: 'epicflow-grants',
      roots: [join(closed, 'epicflow')],
      home: join(closed, 'epicflow', 'homes'),
      env,
      sandbox: await sandbox(env, join(closed, 'epicflow', 'scratch')),
    });
    const path = { PATH: `${join(closed, 'tools')}:${env.PATH}` };
    const r = await walled.runShell('my-tool', {
      cwd: join(closed, 'epicflow', 'tree'),
      env: path,
      timeoutMs: 30_000,
    });
    expect({ code: r.exitCode, out: r.stdout.trim(), err: r.stderr }).toEqual({
      code: 0,
      out: 'tool ran',
      err: '',
    });
    expect(statSync(closed).mode & 0o007).toBe(0);
    expect(userAclEntries(closed)).toEqual([]);
  });
});

describeNeeding(['cron'], 'what untrusted code leaves for later', () => {
  it('removes what the user scheduled for later once the step ended', async () => {
    // A crontab as the user would have made one where cron.deny did not stop it (crontab
    // itself refuses now, even to root, so it is written where cron reads it).
    const tab = `/var/spool/cron/crontabs/${user}`;
    writeFileSync(tab, '* * * * * true\n', { mode: 0o600 });
    execFileSync('chown', [`${user}:crontab`, tab]);
    const r = await step(join(root, 'trees', 'a'), 'true');
    expect(r.exitCode).toBe(0);
    expect(existsSync(tab)).toBe(false);
    // And it may make no new one.
    const again = await step(join(root, 'trees', 'a'), "echo '* * * * * true' | crontab -");
    expect(again.exitCode).not.toBe(0);
    expect(readFileSync('/etc/cron.deny', 'utf8').split('\n')).toContain(user);
  });
});

describe('what untrusted code leaves outside its folders', () => {
  it('removes its files in /run/lock and its System V IPC objects once the step ended', async () => {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    const lock = join('/run/lock', `epicflow-grants-${process.pid}`);
    const ipcOf = (): string[] =>
      ['shm', 'msg', 'sem'].flatMap((kind) => {
        const [, ...rows] = readFileSync(`/proc/sysvipc/${kind}`, 'utf8').trim().split('\n');
        const at = kind === 'sem' ? 4 : 7;
        return rows
          .map((row) => row.trim().split(/\s+/))
          .filter((cols) => Number(cols[at]) === uid)
          .map((cols) => `${kind} ${cols[1]}`);
      });
    const r = await step(
      join(root, 'trees', 'a'),
      `echo planted > ${lock} && ipcmk -M 4096 && ipcmk -Q && ipcmk -S 1`,
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/Shared memory id: \d+/);
    expect(existsSync(lock)).toBe(false);
    expect(ipcOf()).toEqual([]);
  });
});

describe('who runs each role', () => {
  const as = async (scope: string, role: string): Promise<string> => {
    const tree = join(root, 'trees', 'a');
    const r = await untrusted.runShell('id -un', {
      cwd: tree,
      env,
      timeoutMs: 30_000,
      seat: { scope, role },
    });
    expect(r.exitCode).toBe(0);
    return r.stdout.trim();
  };

  it('never runs two roles of one story as one user, however the steps alternate', async () => {
    const coder = await as('story-1', 'coder:claude');
    const checks = await as('story-1', 'checks');
    const judge = await as('story-1', 'judge:claude');
    const takeover = await as('story-1', 'coder:codex');
    expect(new Set([coder, checks, judge, takeover]).size).toBe(4);
    // A role plays again as itself.
    expect(await as('story-1', 'coder:claude')).toBe(coder);
    expect(await as('story-1', 'judge:claude')).toBe(judge);
    // Another story may have any of them (one at a time, each step reaped and reclaimed).
    expect([coder, checks, judge, takeover]).toContain(await as('story-2', 'judge:claude'));
  });
});
