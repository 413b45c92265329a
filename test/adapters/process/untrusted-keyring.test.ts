/**
 * A step of an agent user never holds epicflow's session keyring: a process keeps its
 * session keyring through a change of user (root's spawn, `sudo`) and into a user namespace,
 * and may read every key in it as its possessor, whoever owns the key (a Kerberos ticket, a
 * token a tool cached there). epicflow here holds a secret in a session keyring of its own;
 * a hostile step searches its session keyring for it and reads it — without the kernel
 * sandbox and in it, as root and through `sudo`. The same reader run as that user straight
 * from epicflow's process finds the secret: the route is real. Every folder is the test's own.
 *
 * @needs root sudo sandbox
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sudoer } from '../../action/support/runner-users.js';
import { bundledEntry } from '../../support/bundled-entry.js';
import { holder, READER } from './support/keyring-scripts.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'support', 'keyring-child.ts');
const SECRET = `epicflow-keyring-secret-${process.pid}`;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-keyring-'));
  await chmod(dir, 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(argv: string[], as?: { uid: number; gid: number }, cwd = '/'): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      '/usr/bin/perl',
      ['-e', holder(SECRET), '--', ...argv],
      { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: cwd }, cwd, ...as },
      (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`${String(error)}\n${stderr}`)),
    );
  });
}

async function stepsReading(base: string, as?: { uid: number; gid: number }) {
  const folder = join(dir, base);
  await mkdir(folder, { mode: 0o755 });
  if (as !== undefined) await chown(folder, as.uid, as.gid);
  const out = await run(
    [process.execPath, await bundledEntry(CHILD), base, folder, READER],
    as,
    folder,
  );
  return JSON.parse(out) as { alone: string; walled: string };
}

describe("a step of an agent user and epicflow's session keyring", () => {
  it('as root: the step reads no key of it, in the sandbox or not; the same reader run straight as that user does', async () => {
    expect(await stepsReading('epicflow-keyring-r')).toEqual({ alone: 'no-key', walled: 'no-key' });
    const straight = await run([
      'setpriv',
      '--reuid=nobody',
      '--regid=nogroup',
      '--clear-groups',
      '/usr/bin/perl',
      '-e',
      READER,
    ]);
    expect(straight.trim()).toBe(SECRET);
  });

  it('through sudo (a GitHub-hosted runner): the same', async () => {
    const runner = await sudoer('epicflow-test-sudoer');
    expect(await stepsReading('epicflow-keyring-s', runner)).toEqual({
      alone: 'no-key',
      walled: 'no-key',
    });
  });
});
