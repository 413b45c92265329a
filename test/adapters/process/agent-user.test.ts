/**
 * The agent user pool: every job on one machine gets an agent user of its own, because
 * every process of that user is ended after each step — two jobs sharing one would end
 * each other's agents, and could write into each other's worktrees. The tests run as root,
 * so users can be made here; these get a name of their own (`epicflow-pool`, `-2`, ...).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

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

async function claimant(): Promise<Claimant> {
  const home = await mkdtemp(join(tmpdir(), 'epicflow-pool-home-'));
  dirs.push(home);
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, BASE, home], {
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
