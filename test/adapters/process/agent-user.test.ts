/**
 * The agent user pool: every job on one machine whose steps run without the kernel sandbox
 * gets an agent user of its own, because every process of that user is ended after each
 * step — two jobs sharing one would end each other's agents, and could write into each
 * other's worktrees. Jobs whose steps run in the sandbox share one (the kernel keeps their
 * steps apart), which no job without it takes meanwhile. The tests run as root,
 * so users can be made here; these get a name of their own (`epicflow-pool`, `-2`, ...).
 * A user that may use sudo is refused before any step runs (the same check in every mode:
 * the Action's job then fails with the reason in its summary, as trust-boundary.test.ts
 * shows for a runner where no user can be had).
 *
 * @needs root
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { agentUser } from '../../../src/adapters/process/untrusted.js';
import { describeError, isEpicflowError } from '../../../src/core/errors.js';
import { sudoer } from '../../action/support/runner-users.js';
import { bundledEntry } from '../../support/bundled-entry.js';
import { describeNeeding } from '../../support/needs.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'support', 'claim-child.ts');
const BASE = 'epicflow-pool';

interface Claimant {
  readonly child: ChildProcessWithoutNullStreams;
  /** The next line it prints. */
  next(): Promise<string>;
}

let claimants: Claimant[] = [];
let dirs: string[] = [];
afterEach(async () => {
  for (const c of claimants) c.child.kill('SIGKILL');
  await Promise.all(
    claimants.map((c) =>
      c.child.exitCode !== null || c.child.signalCode !== null
        ? undefined
        : new Promise((done) => c.child.on('exit', done)),
    ),
  );
  claimants = [];
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});

async function claimant(home?: string, walled = false): Promise<Claimant> {
  home ??= await mkdtemp(join(tmpdir(), 'epicflow-pool-home-'));
  dirs.push(home);
  // Bundled once (test/support/bundled-entry.ts): tsx would transpile the sources at each start.
  const args = [await bundledEntry(CHILD), BASE, home, ...(walled ? ['walled'] : [])];
  const child = spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines = createInterface({ input: child.stdout });
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => {
    const w = waiting.shift();
    if (w) w(line);
    else queue.push(line);
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const queued = queue.shift();
      if (queued !== undefined) return resolve(queued);
      waiting.push(resolve);
      child.once('exit', (code) => reject(new Error(`claimant exited ${code}: ${stderr}`)));
    });
  const c = { child, next };
  claimants.push(c);
  expect(await next()).toBe('ready');
  return c;
}

interface Claimed {
  readonly user?: string;
  readonly probe?: string;
  readonly stderr?: string;
  readonly error?: string;
}

async function claimAtOnce(cs: readonly Claimant[]): Promise<Claimed[]> {
  // A few milliseconds apart: a claim that checks, then takes, loses to one in between.
  cs.forEach((c, i) => setTimeout(() => c.child.stdin.write('go\n'), i * 6));
  return Promise.all(cs.map(async (c) => JSON.parse(await c.next()) as Claimed));
}

describe('the agent user pool', () => {
  it('gives processes that claim at almost the same moment a user each, and frees a killed one', async () => {
    const cs = await Promise.all(Array.from({ length: 8 }, () => claimant()));
    const claimed = await claimAtOnce(cs);
    expect(claimed.filter((c) => c.error !== undefined)).toEqual([]);
    const users = claimed.map((c) => c.user);
    expect(new Set(users).size).toBe(8);
    for (const u of users) expect(u).toMatch(/^epicflow-pool(-\d+)?$/);

    // A job that dies without a word (SIGKILL) gives its user back at once.
    const [first] = cs;
    const freed = claimed[0]?.user;
    first?.child.kill('SIGKILL');
    await new Promise((done) => first?.child.on('exit', done));
    const [late] = await claimAtOnce([await claimant()]);
    expect(late?.user).toBe(freed);
  });

  it('keeps the locks out of reach of the agents', async () => {
    const [claimed] = await claimAtOnce([await claimant()]);
    expect(claimed?.user).toMatch(/^epicflow-pool(-\d+)?$/);
    // Running as that user, the agent can neither list the locks nor open one (to lock it).
    expect(claimed?.probe).toMatch(/^list [1-9]\d*$/m);
    expect(claimed?.probe).toMatch(/^open [1-9]\d*$/m);
    expect(claimed?.stderr).toMatch(/Permission denied/);
  });
});

describeNeeding(
  ['sandbox'],
  'the agent user of processes whose steps run in the kernel sandbox',
  () => {
    it('is one, shared by all of them, and never held by a process without the sandbox meanwhile', async () => {
      // Three processes in the sandbox claim at once, beside one without it.
      const walled = await Promise.all(Array.from({ length: 3 }, () => claimant(undefined, true)));
      const claimed = await claimAtOnce(walled);
      expect(claimed.filter((c) => c.error !== undefined)).toEqual([]);
      const shared = claimed[0]?.user ?? '';
      expect(shared).toMatch(/^epicflow-pool(-\d+)?$/);
      expect(claimed.map((c) => c.user)).toEqual([shared, shared, shared]);
      const [alone] = await claimAtOnce([await claimant()]);
      expect(alone?.user).toMatch(/^epicflow-pool(-\d+)?$/);
      expect(alone?.user).not.toBe(shared);

      // A step of one of them runs whole while another process comes to share the user: the
      // newcomer does not clean the user (which would end that step).
      const [first] = walled;
      first?.child.stdin.write('long\n');
      const [newcomer] = await claimAtOnce([await claimant(undefined, true)]);
      expect(newcomer?.user).toBe(shared);
      expect(JSON.parse((await first?.next()) ?? '{}')).toEqual({
        out: 'survived',
        code: 0,
        signal: null,
      });

      // Once they are gone, the user is free for anyone again.
      for (const c of [...walled, ...claimants.slice(-1)]) c.child.kill('SIGKILL');
      await Promise.all(
        [...walled, ...claimants.slice(-1)].map(
          (c) => new Promise((done) => c.child.on('exit', done)),
        ),
      );
      const [later] = await claimAtOnce([await claimant()]);
      expect(later?.user).toBe(shared);
    });
  },
);

describeNeeding(['sudo'], 'a user that may use sudo', () => {
  it('is refused before any step runs, named, with what to do', async () => {
    const agent = await sudoer('epicflow-sudo-agent');
    const dir = await mkdtemp(join(tmpdir(), 'epicflow-sudo-agent-'));
    dirs.push(dir);
    try {
      const refused: unknown = await agentUser({
        user: agent.name,
        roots: [dir],
        home: join(dir, 'homes'),
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isEpicflowError(refused, 'isolation')).toBe(true);
      expect(describeError(refused)).toContain(
        `the user ${agent.name} may use sudo: it would not be isolated`,
      );
      expect(describeError(refused)).toContain('remove it from the sudoers');
    } finally {
      // No user that may use sudo is left behind.
      await rm('/etc/sudoers.d/epicflow-sudo-agent', { force: true });
    }
  });
});

describeNeeding(['acl'], 'the folders above the trees', () => {
  it('lets its user alone pass through the folders above its tree, and takes that back at the next claim', async () => {
    // The folders a job's trees are in: closed to other users (mkdtemp makes them 0700),
    // as a home or /root is.
    const homes = [
      await mkdtemp(join(tmpdir(), 'epicflow-pool-home-')),
      await mkdtemp(join(tmpdir(), 'epicflow-pool-home-')),
    ];
    const acl = (dir: string): string =>
      execFileSync('getfacl', ['--omit-header', '--absolute-names', dir], { encoding: 'utf8' });
    const first = await claimant(homes[0]);
    const [claimed] = await claimAtOnce([first]);
    expect(claimed?.error).toBeUndefined();
    const user = claimed?.user ?? '?';
    // Its step ran in its tree (it probed the locks from there) ...
    expect(claimed?.probe).toMatch(/^list [1-9]\d*$/m);
    // ... and the folder above it is still closed to every other user: an entry for the
    // agent user alone, no search bit for others.
    // (With an ACL, the group bits of the mode show its mask; the owning group keeps none.)
    expect(statSync(homes[0] as string).mode & 0o007).toBe(0);
    expect(acl(homes[0] as string)).toContain(`user:${user}:--x`);
    expect(acl(homes[0] as string)).toMatch(/^group::---$/m);
    expect(acl(homes[0] as string)).toMatch(/^other::---$/m);
    expect(() =>
      execFileSync('runuser', [
        '-u',
        'nobody',
        '--',
        'test',
        '-e',
        join(homes[0] as string, 'tree'),
      ]),
    ).toThrow();

    // The next process that claims the user takes the entry away before it runs anything.
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.on('exit', done));
    const [again] = await claimAtOnce([await claimant(homes[1])]);
    expect(again?.user).toBe(user);
    expect(acl(homes[0] as string)).not.toContain(`user:${user}:`);
    expect(acl(homes[1] as string)).toContain(`user:${user}:--x`);
  });
});
