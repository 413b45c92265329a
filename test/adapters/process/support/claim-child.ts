/**
 * A process that claims an agent user: it loads, says `ready`, claims when told `go` (so
 * that several claim at the same moment), prints the user it got and what an agent of
 * that user could do with the locks, and then keeps the user until told `exit` or killed.
 * With `walled` as its third argument its steps run in the kernel sandbox; told `long`, it
 * runs a step of two seconds and prints what it printed.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sandbox } from '../../../../src/adapters/process/sandbox.js';
import { agentUser, type Untrusted } from '../../../../src/adapters/process/untrusted.js';

// `root`: a fresh folder of the test's own, under which the users' homes are made.
const [base, root, walled] = process.argv.slice(2) as [string, string, string | undefined];
const home = join(root, 'homes');
const tree = join(root, 'tree');
const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const lines = createInterface({ input: process.stdin });
const say = (line: string): void => void process.stdout.write(`${line}\n`);

let untrusted: Untrusted | undefined;

say('ready');
for await (const line of lines) {
  if (line === 'long') {
    const r = await untrusted?.runShell('sleep 2; echo survived', {
      cwd: tree,
      env,
      timeoutMs: 30_000,
    });
    say(JSON.stringify({ out: r?.stdout.trim(), code: r?.exitCode, signal: r?.signal }));
  }
  if (line === 'go') {
    try {
      await mkdir(tree, { recursive: true });
      untrusted = await agentUser({
        user: base,
        roots: [root],
        home,
        env,
        ...(walled === 'walled' ? { sandbox: await sandbox(env, join(root, 'scratch')) } : {}),
      });
      const user = /as the user (\S+) /.exec(untrusted.description)?.[1] ?? '?';
      // What a hostile agent of this user can do with the pool's locks.
      const probe = await untrusted.runShell(
        `ls /run/epicflow-agent-users; echo "list $?"; cat /run/epicflow-agent-users/${user}.lock; echo "open $?"`,
        { cwd: tree, env, timeoutMs: 30_000 },
      );
      say(JSON.stringify({ user, probe: probe.stdout.trim(), stderr: probe.stderr.trim() }));
    } catch (e) {
      say(JSON.stringify({ error: String(e) }));
    }
  }
  if (line === 'exit') break;
}
lines.close();
