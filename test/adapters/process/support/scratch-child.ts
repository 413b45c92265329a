/**
 * A process that runs one step in the kernel sandbox with its default scratch folder (under
 * the system's temporary folder, which the test points at a folder of its own), prints what
 * the step printed, and exits.
 */
import { sandbox } from '../../../../src/adapters/process/sandbox.js';
import { sameUser } from '../../../../src/adapters/process/untrusted.js';

const [tree] = process.argv.slice(2) as [string];
const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const r = await sameUser(await sandbox(env)).runShell('echo made > /tmp/x && echo ok', {
  cwd: tree,
  env,
  timeoutMs: 60_000,
});
process.stdout.write(r.stdout);
