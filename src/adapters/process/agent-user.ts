/**
 * The agent users: separate unprivileged users untrusted code runs as (see
 * untrusted.ts). This module has what concerns one such user: becoming it
 * (root, or passwordless sudo), claiming one of the pool for this process (a
 * kernel lock), creating it, proving it is isolated, ending its processes and
 * removing what it left to run later (crontab, at jobs) or in shared folders.
 */
import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EpicflowError } from '../../core/errors.js';
import { alive, procHead, procPids } from './proc-files.js';
import { runProcess, type ProcessResult, type RunProcessOptions } from './run-process.js';

/** How epicflow becomes the agent user: it is root, or it may use sudo without a password. */
export type Privilege = 'root' | 'sudo';

export const USER_NAME = /^[a-z_][a-z0-9_-]{0,30}$/;

/** One agent user, established: its ids, and proven unable to reach epicflow's rights. */
export interface AgentAccount {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
}

/** What every privileged helper needs: how to become root, and the environment to run it in. */
export interface Privileged {
  readonly privilege: Privilege;
  readonly env: Readonly<Record<string, string>>;
  /** `argv` as root (itself when epicflow is root, else through `sudo -n`). */
  argv(argv: readonly string[]): string[];
}

/** Processes of `uid` that are alive (zombies are dead already: they only wait to be reaped). */
function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const pid of procPids()) {
    const status = procHead(pid, 'status');
    if (status === null) continue; // gone meanwhile
    const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
    if (uids === null || !alive(status)) continue;
    if ([uids[1], uids[2], uids[3]].some((u) => Number(u) === uid)) pids.push(pid);
  }
  return pids;
}

/** A small command run by epicflow itself; throws `isolation` with what it printed when it fails. */
export async function must(
  what: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  extra: Partial<RunProcessOptions> = {},
): Promise<ProcessResult> {
  const r = await runProcess(argv, { cwd: '/', env, timeoutMs: 60_000, ...extra });
  if (r.exitCode !== 0) {
    const output = [r.spawnError?.message, r.stderr.trim(), r.stdout.trim()]
      .filter((s) => s !== undefined && s !== '')
      .join(' | ');
    throw new EpicflowError('isolation', `${what} (${argv.join(' ')}): ${output || 'failed'}`);
  }
  return r;
}

/**
 * How this process may become another user: root, or passwordless sudo. Refuses
 * (`isolation`) with neither, and where the kernel lets a user hard-link files of
 * others (handing folders over and back with `chown -R` is safe only without that).
 */
export async function establishPrivilege(
  env: Readonly<Record<string, string>>,
): Promise<Privileged> {
  const self = process.getuid?.() ?? -1;
  let privilege: Privilege;
  if (self === 0) privilege = 'root';
  else {
    const r = await runProcess(['sudo', '-n', 'true'], { cwd: '/', env, timeoutMs: 30_000 });
    if (r.exitCode !== 0) {
      throw new EpicflowError(
        'isolation',
        'cannot run the agent as a separate user: epicflow runs without root and without passwordless sudo',
        {
          details: [
            'GitHub-hosted runners have passwordless sudo; on a self-hosted runner, give the runner user passwordless sudo or run the job as root',
          ],
        },
      );
    }
    privilege = 'sudo';
  }
  const hardlinks = await readFile('/proc/sys/fs/protected_hardlinks', 'utf8').catch(() => '');
  if (hardlinks.trim() !== '1') {
    throw new EpicflowError(
      'isolation',
      'cannot isolate the agent: the kernel setting fs.protected_hardlinks is not 1',
      {
        details: [
          'set it with `sysctl fs.protected_hardlinks=1` (the default of current Linux distributions)',
        ],
      },
    );
  }
  return {
    privilege,
    env,
    argv: (argv) => (privilege === 'root' ? [...argv] : ['sudo', '-n', ...argv]),
  };
}

/** The user, created when missing (a system user of its own group, no home, no login shell). */
export async function ensureUser(user: string, root: Privileged): Promise<AgentAccount> {
  const { env } = root;
  const exists = await runProcess(['id', '-u', user], { cwd: '/', env, timeoutMs: 30_000 });
  if (exists.exitCode !== 0) {
    const created = await runProcess(
      root.argv([
        'useradd',
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
        user,
      ]),
      { cwd: '/', env, timeoutMs: 60_000 },
    );
    // Exit 9: another job created it meanwhile.
    if (created.exitCode !== 0 && created.exitCode !== 9) {
      await must(`cannot create the user ${user} for untrusted code`, ['id', '-u', user], env);
    }
  }
  const uid = Number((await must(`no user ${user}`, ['id', '-u', user], env)).stdout.trim());
  const gid = Number((await must(`no group of ${user}`, ['id', '-g', user], env)).stdout.trim());
  const self = process.getuid?.() ?? -1;
  if (!Number.isInteger(uid) || uid === 0 || uid === self) {
    throw new EpicflowError(
      'isolation',
      `the user ${user} (uid ${uid}) is root or epicflow's own user: untrusted code would run with epicflow's rights`,
    );
  }
  return { user, uid, gid };
}

/** `argv` as the account, from `/`, with `env` (no grant, no reap: for epicflow's own probes). */
function asAccount(
  account: AgentAccount,
  root: Privileged,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<ProcessResult> {
  if (root.privilege === 'root') {
    return runProcess(argv, {
      cwd: '/',
      env,
      timeoutMs: 30_000,
      runAs: { uid: account.uid, gid: account.gid },
    });
  }
  const fixed = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return runProcess(['sudo', '-n', '-u', account.user, '--', '/usr/bin/env', ...fixed, ...argv], {
    cwd: '/',
    env: root.env,
    timeoutMs: 30_000,
  });
}

/**
 * Nothing is trusted until it is shown: as the account, `sudo -n true` must be refused
 * (sudo's exit code 1) and reading this process's `/proc/<pid>/environ` must be denied
 * (EACCES). Anything else — a pass, another failure, a probe that could not start — is
 * a refusal: a check that did not run proves nothing.
 */
export async function proveIsolated(account: AgentAccount, root: Privileged): Promise<void> {
  const env = { PATH: root.env['PATH'] ?? '/usr/bin:/bin', HOME: '/nonexistent', LC_ALL: 'C' };
  const unproven = (check: string, r: ProcessResult, expected: string): EpicflowError => {
    const seen = [
      r.spawnError === undefined ? `exit code ${String(r.exitCode)}` : r.spawnError.message,
      r.stderr.trim(),
    ]
      .filter((s) => s !== '')
      .join(': ');
    return new EpicflowError(
      'isolation',
      `cannot prove that the user ${account.user} is isolated: ${check} (expected ${expected}; got ${seen})`,
      {
        details: [
          'remove it from the sudoers (and the groups sudoers names), or choose another user; it must be a user other than the one epicflow runs as, without CAP_SYS_PTRACE',
        ],
      },
    );
  };
  // Without a sudo anywhere on the PATH, no user can use it; with one, it must refuse.
  const sudoPath = await onPath('sudo', env.PATH);
  if (sudoPath !== null) {
    const sudo = await asAccount(account, root, [sudoPath, '-n', 'true'], env);
    if (sudo.exitCode === 0) {
      throw new EpicflowError(
        'isolation',
        `the user ${account.user} may use sudo: it would not be isolated`,
        {
          details: [
            'remove it from the sudoers (and the groups sudoers names), or choose another user',
          ],
        },
      );
    }
    if (sudo.spawnError !== undefined || sudo.exitCode !== 1) {
      throw unproven(`${sudoPath} -n true`, sudo, 'sudo to refuse it with exit code 1');
    }
  }
  const environ = await asAccount(
    account,
    root,
    ['cat', '--', `/proc/${process.pid}/environ`],
    env,
  );
  if (environ.exitCode === 0) {
    throw new EpicflowError(
      'isolation',
      `the user ${account.user} can read epicflow's environment`,
      {
        details: ['it must be a user other than the one epicflow runs as, without CAP_SYS_PTRACE'],
      },
    );
  }
  if (
    environ.spawnError !== undefined ||
    environ.exitCode !== 1 ||
    !/Permission denied/.test(environ.stderr)
  ) {
    throw unproven(`reading /proc/${process.pid}/environ`, environ, 'Permission denied');
  }
}

/** The first executable `name` in the folders of `path`; null when there is none. */
export async function onPath(name: string, path: string): Promise<string | null> {
  for (const dir of path.split(':')) {
    if (!dir.startsWith('/')) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Ends every process of the account: frozen first (so none can fork), then killed, until none is left. */
export async function reapAccount(account: AgentAccount, root: Privileged): Promise<void> {
  const { uid, user } = account;
  for (let round = 0; round < 100; round++) {
    const pids = processesOf(uid);
    if (pids.length === 0) return;
    if (root.privilege === 'root') {
      for (const sig of ['SIGSTOP', 'SIGKILL'] as const) {
        for (const pid of pids) {
          try {
            process.kill(pid, sig);
          } catch {
            // gone meanwhile
          }
        }
      }
    } else {
      // As the user itself: kill(-1) reaches every process it owns, forks included.
      await runProcess(
        ['sudo', '-n', '-u', user, '--', '/bin/sh', '-c', 'kill -STOP -1; kill -KILL -1; true'],
        { cwd: '/', env: root.env, timeoutMs: 30_000 },
      );
    }
    await delay(round < 10 ? 10 : 50);
  }
  const left = processesOf(uid);
  if (left.length > 0) {
    throw new EpicflowError(
      'isolation',
      `could not end the processes of ${user}: ${left.slice(0, 10).join(', ')} still run`,
    );
  }
}

/**
 * What the account would leave for a later step, without it: its crontab and at jobs
 * (both spool folders are root's; a user listed in `cron.deny`/`at.deny`, done once per
 * account, cannot make new ones where cron and at honour those files), what it made in
 * /tmp, /var/tmp, /dev/shm and /run/lock (their entries it owns, with all they hold) and
 * its System V IPC objects, so a judge
 * never meets a file a coder planted there, even as another user. (Files it left inside
 * another user's world-writable folder there are that folder's owner's to clear.) Run
 * after every step, once no process of the account is left, and before a job first uses
 * the account (one that was killed before it could clean up). One `sh` (the user, the uid)
 * and one `find` over every folder: it runs after every step (the shell reads the IPC tables).
 */
const DROP_LEFTOVERS = [
  'for f in /var/spool/cron/crontabs/"$1" /var/spool/cron/"$1" /var/spool/cron/tabs/"$1"; do',
  '  if [ -f "$f" ] || [ -L "$f" ]; then rm -f -- "$f"; fi',
  'done',
  'uid=$2',
  // Its files in the at spools; its entries in the temporary folders, with all they hold.
  'set -f; dirs=',
  'for d in /var/spool/cron/atjobs /var/spool/at /var/spool/atjobs /tmp /var/tmp /dev/shm /run/lock; do',
  '  if [ -d "$d" ]; then dirs="$dirs $d"; fi',
  'done',
  'if [ -n "$dirs" ]; then',
  '  find $dirs -xdev -mindepth 1 -maxdepth 1 -user "$uid" \\( \\( -path "/var/spool/cron/atjobs/*" -o -path "/var/spool/at/*" -o -path "/var/spool/atjobs/*" \\) -type f -delete -o -path "/var/spool/*" -o -exec rm -rf -- {} + \\) 2>/dev/null',
  'fi',
  // System V shared memory, message queues and semaphores it owns or made (the uid and
  // creator uid columns of /proc/sysvipc/*: 8 and 10, 5 and 7 for semaphores): they
  // outlive every process. The ids are read first, then removed.
  'if command -v ipcrm >/dev/null 2>&1; then',
  '  for t in shm:m msg:q sem:s; do',
  '    f=/proc/sysvipc/${t%%:*}; flag=${t#*:}; ids=',
  '    [ -r "$f" ] || continue',
  '    { read -r _',
  '      while read -r _ id _ _ c5 _ c7 c8 _ c10 _; do',
  '        case $t in sem:*) a=$c5 b=$c7 ;; *) a=$c8 b=$c10 ;; esac',
  '        if [ "$a" = "$uid" ] || [ "$b" = "$uid" ]; then ids="$ids $id"; fi',
  '      done; } < "$f"',
  '    for id in $ids; do ipcrm "-$flag" "$id" 2>/dev/null; done',
  '  done',
  'fi',
  'true',
].join('\n');

export async function dropLeftovers(account: AgentAccount, root: Privileged): Promise<void> {
  await must(
    `cannot remove what ${account.user} left behind`,
    root.argv(['sh', '-c', DROP_LEFTOVERS, 'sh', account.user, String(account.uid)]),
    root.env,
  );
}

/**
 * Before a job uses the account: it may schedule nothing (it is listed in `cron.deny` and
 * `at.deny` where cron or at is installed or the file exists), and nothing of an earlier job
 * is left. Shell built-ins only: the same `sh` then drops the leftovers.
 */
const DENY_SCHEDULING = [
  'for tool in cron at; do',
  '  case $tool in cron) program=crontab ;; *) program=at ;; esac',
  '  if command -v "$program" >/dev/null 2>&1 || [ -e /etc/$tool.deny ]; then',
  '    true >> /etc/$tool.deny || continue',
  '    listed=',
  '    while IFS= read -r line || [ -n "$line" ]; do',
  '      if [ "$line" = "$1" ]; then listed=1; fi',
  '    done < /etc/$tool.deny',
  '    if [ -z "$listed" ]; then printf "%s\\n" "$1" >> /etc/$tool.deny; fi',
  '  fi',
  'done',
].join('\n');

export async function freshAccount(account: AgentAccount, root: Privileged): Promise<void> {
  await must(
    `cannot prepare ${account.user} for this job`,
    root.argv([
      'sh',
      '-c',
      `${DENY_SCHEDULING}\n${DROP_LEFTOVERS}`,
      'sh',
      account.user,
      String(account.uid),
    ]),
    root.env,
  );
}
