/**
 * A process that runs steps in the kernel sandbox as one agent user — four back to back,
 * then two side by side — and prints what a hostile step could leave for the next: each
 * step's result and the agent user's processes still running the moment it returned. Run as root or as a
 * user with passwordless sudo (the modes `agentUser` has).
 *
 * Usage: node walled-child.js <user> <folder>   (a fresh folder of the caller's own)
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sandbox } from '../../../../src/adapters/process/sandbox.js';
import { agentUser } from '../../../../src/adapters/process/untrusted.js';

const [base, root] = process.argv.slice(2) as [string, string];
const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const tree = join(root, 'tree');
// A tree as `worktree add` leaves one: its `.git` a file.
await mkdir(tree, { recursive: true });
await writeFile(join(tree, '.git'), 'gitdir: /nonexistent\n');
const untrusted = await agentUser({
  user: base,
  roots: [root],
  home: join(root, 'homes'),
  env,
  sandbox: await sandbox(env, join(root, 'scratch')),
});
const uid = Number(/\(uid (\d+)\)/.exec(untrusted.description)?.[1]);

/** The pids of the user's processes that still run (not dead, waiting to be reaped). */
async function running(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const uids = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (Number(uids) === uid && !/^State:\s+[ZX]/m.test(status)) pids.push(Number(entry));
  }
  return pids;
}

const step = async (script: string, timeoutMs: number) => {
  const r = await untrusted.runShell(script, { cwd: tree, env, timeoutMs });
  const left = await running();
  return { exitCode: r.exitCode, timedOut: r.timedOut, stdout: r.stdout.trim(), left };
};

// Left behind in sessions of their own, their environment emptied, their output elsewhere:
// one writing into the tree, three busy (the kernel takes a moment to end them all).
const leave = [
  `setsid env -i /bin/sh -c 'while true; do echo x >> ${tree}/left.log; sleep 0.05; done' </dev/null >/dev/null 2>&1 &`,
  ...[1, 2, 3].map(
    () => `setsid env -i /bin/sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &`,
  ),
].join('\n');
const results = {
  ended: await step(`${leave}\necho started`, 30_000),
  afterEnded: await step('sleep 1; echo alive', 30_000),
  killed: await step(`${leave}\nexec sleep 60`, 1_000),
  afterKilled: await step('sleep 1; echo alive', 30_000),
};
// Two steps side by side, as the one user: one killed for its timeout, one that goes on.
const [besideKilled, beside] = await Promise.all([
  step('exec sleep 60', 1_000),
  step('sleep 2; id -u', 30_000),
]);
process.stdout.write(`${JSON.stringify({ uid, results: { ...results, besideKilled, beside } })}\n`);
