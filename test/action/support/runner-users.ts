/**
 * Runner users of the tests' own making, for the three ways a story job runs:
 * as root (the tests' own user), as an unprivileged runner with passwordless sudo
 * (GitHub-hosted runners), and as one with neither (a self-hosted runner without
 * root or sudo). The tests run as root, so such users can be made here; sudo must be
 * installed (see docs/testing.md).
 */
import { execFile } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RunnerUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

async function ensureUser(name: string): Promise<RunnerUser> {
  const id = (flag: string): Promise<string> =>
    run('id', [flag, name]).then((r) => r.stdout.trim());
  try {
    await id('-u');
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', name]).catch(
      () => undefined,
    );
  }
  return { name, uid: Number(await id('-u')), gid: Number(await id('-g')) };
}

/** A user that may run anything as root with `sudo -n` (no password). */
export async function sudoer(name: string): Promise<RunnerUser> {
  const user = await ensureUser(name);
  const file = `/etc/sudoers.d/${name}`;
  await writeFile(file, `${name} ALL=(ALL:ALL) NOPASSWD: ALL\n`);
  await chmod(file, 0o440);
  return user;
}

/** A user without root and outside the sudoers. */
export async function plainUser(name: string): Promise<RunnerUser> {
  return ensureUser(name);
}
