/**
 * Runner users of the tests' own making, for the three ways a story job runs:
 * as root (the tests' own user), as an unprivileged runner with passwordless sudo
 * (GitHub-hosted runners), and as one with neither (a self-hosted runner without
 * root or sudo). The tests run as root, so such users can be made here; sudo must be
 * installed (see docs/testing.md).
 */
import { execFile } from 'node:child_process';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
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

/**
 * A user that may run anything as root with `sudo -n` (no password). Test files running at
 * once share the user, and one's jobs may call `sudo` while another makes it a sudoer: the
 * rule is put in place by a rename (sudo skips a name with a dot), never rewritten where
 * it is, which would leave it empty for a moment and refuse that `sudo`.
 */
export async function sudoer(name: string): Promise<RunnerUser> {
  const user = await ensureUser(name);
  const file = `/etc/sudoers.d/${name}`;
  const rule = `${name} ALL=(ALL:ALL) NOPASSWD: ALL\n`;
  if ((await readFile(file, 'utf8').catch(() => null)) !== rule) {
    const next = `${file}.${String(process.pid)}.new`;
    await writeFile(next, rule, { mode: 0o440 });
    await chmod(next, 0o440);
    await rename(next, file);
  }
  return user;
}

/** A user without root and outside the sudoers. */
export async function plainUser(name: string): Promise<RunnerUser> {
  return ensureUser(name);
}
