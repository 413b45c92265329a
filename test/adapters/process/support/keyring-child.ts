/**
 * A process that stands for epicflow with a key in its session keyring (its caller gives it
 * one) and runs one step as an agent user reading that key, without the kernel sandbox and
 * in it, then prints what each read. Run as root or as a user with passwordless sudo.
 *
 * Usage: node keyring-child.js <user> <folder> <reader script>   (a fresh folder of the caller's own)
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sandbox } from '../../../../src/adapters/process/sandbox.js';
import { agentUser } from '../../../../src/adapters/process/untrusted.js';

const [base, root, reader] = process.argv.slice(2) as [string, string, string];
const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const read = async (walled: boolean): Promise<string> => {
  const own = join(root, walled ? 'walled' : 'alone');
  const tree = join(own, 'tree');
  await mkdir(tree, { recursive: true });
  const untrusted = await agentUser({
    user: base,
    roots: [own],
    home: join(own, 'homes'),
    env,
    ...(walled ? { sandbox: await sandbox(env, join(own, 'scratch')) } : {}),
  });
  const r = await untrusted.run(['/usr/bin/perl', '-e', reader], {
    cwd: tree,
    env,
    timeoutMs: 30_000,
  });
  return `${r.stdout.trim()}${r.stderr.trim()}`;
};
process.stdout.write(JSON.stringify({ alone: await read(false), walled: await read(true) }));
