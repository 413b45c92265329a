/**
 * Where code epicflow does not trust runs: the coding agent, the judge's and
 * planner's tools, and setup and gates (they run what the agent wrote).
 *
 * `agentUser(...)` runs it as a separate unprivileged user, so it cannot read
 * what epicflow's own process holds: another uid cannot read `/proc/<pid>/environ`
 * or `/proc/<pid>/mem` of ours, nor ptrace it, nor read our private files. Every
 * process of that user is ended after each step (`kill -1` as that user, after
 * freezing them), so nothing it started — not even a process that left the
 * group with `setsid` and emptied its environment — outlives the step. Before a
 * step the folders it may write (its worktree, its home) are given to that user;
 * the repository's `.git` stays epicflow's (readable, not writable).
 *
 * `sameUser()` runs it as epicflow's own user (a local run): its process group is
 * killed, and every process still carrying the step's marker variable is ended
 * after it (a process that empties its environment escapes the marker: see
 * docs/security.md).
 *
 * Becoming the other user takes root (spawn with uid/gid) or passwordless sudo
 * (`sudo -n -E -u <user>`), as GitHub-hosted runners have.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { chmod, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EpicflowError } from '../../core/errors.js';
import { reapMarked, RUN_MARKER } from './reap.js';
import {
  runProcess,
  shellArgv,
  type ProcessResult,
  type RunProcessOptions,
} from './run-process.js';

export interface UntrustedRunOptions extends RunProcessOptions {
  /** Folders the code may write besides `cwd` (its HOME, a temp folder). */
  readonly writable?: readonly string[];
}

export interface Untrusted {
  /** True when the code runs as a separate user. */
  readonly isolated: boolean;
  /** One line for notes, logs and the job summary. */
  readonly description: string;
  /**
   * A home the untrusted user owns, for setup and gates (npm's cache lives there);
   * undefined when the code runs as epicflow's own user (it keeps that user's home).
   */
  readonly home: string | undefined;
  /** Runs `argv` as untrusted code; every process it left behind is ended before this resolves. */
  run(argv: readonly string[], options: UntrustedRunOptions): Promise<ProcessResult>;
  /** `run` of a shell command line (setup and gates). */
  runShell(command: string, options: UntrustedRunOptions): Promise<ProcessResult>;
}

/** Untrusted code as epicflow's own user: the process group and the step's marker are ended after it. */
export function sameUser(): Untrusted {
  const run = async (
    argv: readonly string[],
    options: UntrustedRunOptions,
  ): Promise<ProcessResult> => {
    const marker = randomUUID();
    try {
      return await runProcess(argv, { ...options, env: { ...options.env, [RUN_MARKER]: marker } });
    } finally {
      // Tools started in sessions of their own escape the group kill, not the marker.
      await reapMarked(marker);
    }
  };
  return {
    isolated: false,
    description: "as epicflow's own user (not isolated)",
    home: undefined,
    run,
    runShell: (command, options) => run(shellArgv(command, options.env), options),
  };
}

export interface AgentUserOptions {
  /**
   * The user untrusted code runs as; created (a system user, no login, no sudo) when
   * missing. Every process of that user is ended after each step, so two jobs on one
   * machine must not share it: the user is claimed for as long as this process lives (a
   * lock the kernel holds for it), and when another process holds it, the next one of
   * `<user>-2` … `<user>-16` is used. Later calls of this process get the same user.
   */
  readonly user: string;
  /** Its home for setup and gates (created, owned by it, mode 0700). */
  readonly home: string;
  /** The environment `sudo`, `id` and `useradd` are found with (PATH). */
  readonly env: Readonly<Record<string, string>>;
}

/** How epicflow becomes the agent user: it is root, or it may use sudo without a password. */
type Privilege = 'root' | 'sudo';

const USER_NAME = /^[a-z_][a-z0-9_-]{0,30}$/;

/** Processes of `uid` that are alive (zombies are dead already: they only wait to be reaped). */
async function processesOf(uid: number): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    try {
      status = await readFile(`/proc/${entry}/status`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (uids === null || state === 'Z' || state === 'X') continue;
    if ([uids[1], uids[2], uids[3]].some((u) => Number(u) === uid)) pids.push(Number(entry));
  }
  return pids;
}

/** A small command run by epicflow itself; throws `isolation` with what it printed when it fails. */
async function must(
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

/** Whether `sudo -n` works for this process (passwordless sudo). */
async function canSudo(env: Readonly<Record<string, string>>): Promise<boolean> {
  const r = await runProcess(['sudo', '-n', 'true'], { cwd: '/', env, timeoutMs: 30_000 });
  return r.exitCode === 0;
}

/** The agent users' locks (a folder only root may enter: no agent can open, let alone lock, them). */
const LOCKS = '/run/epicflow-agent-users';
const POOL_SIZE = 16;
/** flock's exit code when another process holds the lock. */
const LOCK_HELD = 75;

/**
 * Holds an exclusive lock (flock) on `file` for as long as this process lives: a small
 * child (`flock` running `cat`, as root) waits on a pipe from this process and exits when
 * the pipe closes — when this process ends, however it ends. The kernel decides between
 * processes that race for one lock, and a lock never outlives its process. Resolves
 * `false` when another process holds it.
 */
function holdLock(
  file: string,
  privileged: (argv: readonly string[]) => string[],
  env: Readonly<Record<string, string>>,
): Promise<boolean> {
  const argv = privileged([
    'flock',
    '--exclusive',
    '--nonblock',
    '--conflict-exit-code',
    String(LOCK_HELD),
    file,
    'sh',
    '-c',
    'echo held; exec cat >/dev/null',
  ]);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0] ?? 'flock', argv.slice(1), {
      cwd: '/',
      env: { ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let settled = false;
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      f();
    };
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.startsWith('held\n')) return;
      settle(() => {
        // The holder keeps running, but must not keep this process alive.
        child.stdout.destroy();
        child.stderr.destroy();
        child.stdin.on('error', () => undefined);
        (child.stdin as unknown as Socket).unref();
        child.unref();
        resolvePromise(true);
      });
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) =>
      settle(() =>
        reject(
          new EpicflowError('isolation', `cannot lock ${file} (${argv.join(' ')}): ${e.message}`),
        ),
      ),
    );
    child.on('close', (code) =>
      settle(() => {
        if (code === LOCK_HELD) resolvePromise(false);
        else {
          const output = [err.trim(), out.trim()].filter((t) => t !== '').join(' | ');
          reject(
            new EpicflowError(
              'isolation',
              `cannot lock ${file} (${argv.join(' ')}): ${output || `exit code ${String(code)}`}`,
              { details: ['epicflow needs flock (util-linux) to claim an agent user'] },
            ),
          );
        }
      }),
    );
  });
}

/** The users this process claimed, by the name asked for: a process keeps its user. */
const claims = new Map<string, Promise<string>>();

/**
 * Claims `base`, or the first of `base-2` … that no other live process holds, for this
 * process (see `holdLock`); a later call of this process gets the same user.
 */
function claimUser(
  base: string,
  privileged: (argv: readonly string[]) => string[],
  env: Readonly<Record<string, string>>,
): Promise<string> {
  let claim = claims.get(base);
  if (claim === undefined) {
    claim = (async () => {
      await must(
        'cannot prepare the agent user locks',
        privileged(['sh', '-c', 'mkdir -p "$1" && chmod 0700 "$1"', 'sh', LOCKS]),
        env,
      );
      for (let n = 1; n <= POOL_SIZE; n++) {
        const user = n === 1 ? base : `${base}-${n}`;
        if (await holdLock(join(LOCKS, `${user}.lock`), privileged, env)) return user;
      }
      throw new EpicflowError(
        'isolation',
        `every agent user ${base} … ${base}-${POOL_SIZE} is in use by another process on this machine`,
      );
    })();
    claims.set(base, claim);
    // A failed claim may be tried again.
    claim.catch(() => claims.delete(base));
  }
  return claim;
}

/**
 * Untrusted code as a separate user. Refuses (`isolation`) when that cannot be had or
 * does not hold: no root and no passwordless sudo, a user that is root or epicflow's own,
 * a user that may use sudo, or one that can read this process's environment.
 */
export async function agentUser(options: AgentUserOptions): Promise<Untrusted> {
  const { env } = options;
  if (!USER_NAME.test(options.user)) {
    throw new EpicflowError(
      'isolation',
      `invalid user name for untrusted code: ${JSON.stringify(options.user)}`,
    );
  }
  const self = process.getuid?.() ?? -1;
  let privilege: Privilege;
  if (self === 0) privilege = 'root';
  else if (await canSudo(env)) privilege = 'sudo';
  else {
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
  const privileged = (argv: readonly string[]): string[] =>
    privilege === 'root' ? [...argv] : ['sudo', '-n', ...argv];
  // Handing folders over with `chown -R` is safe only if the agent cannot hard-link a file
  // of someone else's into them (the kernel refuses it with protected_hardlinks).
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

  // Held until this process ends.
  const user = await claimUser(options.user, privileged, env);
  // The user: created once (a system user of its own group, no home, no login shell).
  const exists = await runProcess(['id', '-u', user], { cwd: '/', env, timeoutMs: 30_000 });
  if (exists.exitCode !== 0) {
    const created = await runProcess(
      privileged([
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
  if (!Number.isInteger(uid) || uid === 0 || uid === self) {
    throw new EpicflowError(
      'isolation',
      `the user ${user} (uid ${uid}) is root or epicflow's own user: untrusted code would run with epicflow's rights`,
    );
  }

  const home = resolve(options.home);
  await mkdir(home, { recursive: true, mode: 0o700 });
  await must(
    `cannot give ${home} to ${user}`,
    privileged(['chown', '-R', `${uid}:${gid}`, home]),
    env,
  );
  await chmod(home, 0o700).catch(() => undefined);
  await traversable(home, privileged, env);

  /** Ends every process of the user: frozen first (so none can fork), then killed, until none is left. */
  const reapAll = async (): Promise<void> => {
    for (let round = 0; round < 100; round++) {
      const pids = await processesOf(uid);
      if (pids.length === 0) return;
      if (privilege === 'root') {
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
          { cwd: '/', env, timeoutMs: 30_000 },
        );
      }
      await delay(round < 10 ? 10 : 50);
    }
    const left = await processesOf(uid);
    if (left.length > 0) {
      throw new EpicflowError(
        'isolation',
        `could not end the processes of ${user}: ${left.slice(0, 10).join(', ')} still run`,
      );
    }
  };

  /** Gives the folders to the user (the tree's `.git` excepted) and lets it reach them. */
  const grant = async (folders: readonly string[]): Promise<void> => {
    for (const folder of folders) {
      const dir = resolve(folder);
      let entries: string[];
      try {
        entries = await readdir(dir);
      } catch {
        continue; // not there (yet): nothing to give
      }
      // -h: a symbolic link the agent planted changes only itself, never what it points to
      // (and -R walks without following links). Hard links to files of others cannot be
      // planted: the kernel's protected_hardlinks is required (checked when established).
      const inside = entries.filter((e) => e !== '.git').map((e) => join(dir, e));
      await must(
        `cannot give ${dir} to ${user}`,
        privileged(['chown', '-h', `${uid}:${gid}`, dir]),
        env,
      );
      for (let i = 0; i < inside.length; i += 500) {
        await must(
          `cannot give ${dir} to ${user}`,
          privileged(['chown', '-R', '-h', `${uid}:${gid}`, '--', ...inside.slice(i, i + 500)]),
          env,
        );
      }
      await traversable(dir, privileged, env);
    }
  };

  let active = 0;
  const run = async (
    argv: readonly string[],
    runOptions: UntrustedRunOptions,
  ): Promise<ProcessResult> => {
    const writable = [runOptions.cwd, ...(runOptions.writable ?? [])];
    const childHome = runOptions.env['HOME'];
    if (childHome !== undefined) writable.push(childHome);
    await grant(writable);
    const childEnv: Record<string, string> = {
      ...runOptions.env,
      USER: user,
      LOGNAME: user,
      // The repository's `.git` stays epicflow's: the agent's own git may read it (git
      // refuses a repository of another owner otherwise), and does not try to write the
      // index for a `git status` (it may not).
      GIT_OPTIONAL_LOCKS: '0',
      ...(runOptions.env['GIT_CONFIG_COUNT'] === undefined
        ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' }
        : {}),
    };
    const { writable: _w, ...processOptions } = runOptions;
    // Runs of one epic may overlap (stories in parallel, locally): a run's leftovers are
    // ended by its marker at once, and every process of the user once none runs.
    const marker = randomUUID();
    childEnv[RUN_MARKER] = marker;
    active += 1;
    try {
      if (privilege === 'root') {
        return await runProcess(argv, { ...processOptions, env: childEnv, runAs: { uid, gid } });
      }
      // sudo keeps the environment (-E) except what its policy always sets: PATH and HOME
      // are given again on the command line (they carry no secret).
      const fixed = ['HOME', 'PATH', 'USER', 'LOGNAME'].flatMap((k) =>
        childEnv[k] === undefined ? [] : [`${k}=${childEnv[k]}`],
      );
      return await runProcess(
        ['sudo', '-n', '-E', '-u', user, '--', '/usr/bin/env', ...fixed, ...argv],
        {
          ...processOptions,
          env: childEnv,
          // sudo runs as root: this process may not signal it; the user's own kill may.
          kill: (sig) => {
            void runProcess(
              [
                'sudo',
                '-n',
                '-u',
                user,
                '--',
                '/bin/sh',
                '-c',
                `kill -${sig.replace(/^SIG/, '')} -1; true`,
              ],
              { cwd: '/', env, timeoutMs: 30_000 },
            );
          },
        },
      );
    } finally {
      active -= 1;
      if (privilege === 'root') await reapMarked(marker);
      if (active === 0) await reapAll();
    }
  };

  // Nothing is trusted until it is shown: the user may not use sudo, nor read our environment.
  const probeEnv = { PATH: env['PATH'] ?? '/usr/bin:/bin', HOME: home };
  const sudo = await run(['sudo', '-n', 'true'], { cwd: home, env: probeEnv, timeoutMs: 30_000 });
  if (sudo.exitCode === 0) {
    throw new EpicflowError(
      'isolation',
      `the user ${user} may use sudo: it would not be isolated`,
      {
        details: [
          'remove it from the sudoers (and the groups sudoers names), or choose another user',
        ],
      },
    );
  }
  const environ = await run(['cat', `/proc/${process.pid}/environ`], {
    cwd: home,
    env: probeEnv,
    timeoutMs: 30_000,
  });
  if (environ.exitCode === 0) {
    throw new EpicflowError('isolation', `the user ${user} can read epicflow's environment`, {
      details: ['it must be a user other than the one epicflow runs as, without CAP_SYS_PTRACE'],
    });
  }

  return {
    isolated: true,
    description: `as the user ${user} (uid ${uid}), without sudo; every process of it is ended after each step`,
    home,
    run,
    runShell: (command, runOptions) => run(shellArgv(command, runOptions.env), runOptions),
  };
}

/**
 * Lets other users pass through (not list) each folder above `dir`, so the agent user
 * can reach its worktree and home: adds the "search" bit for others where it is missing.
 */
async function traversable(
  dir: string,
  privileged: (argv: readonly string[]) => string[],
  env: Readonly<Record<string, string>>,
): Promise<void> {
  for (let d = dirname(resolve(dir)); ; d = dirname(d)) {
    let mode: number;
    try {
      const s = await stat(d);
      if (!s.isDirectory()) break;
      mode = s.mode;
    } catch {
      break;
    }
    if ((mode & 0o001) === 0) {
      await must(`cannot let untrusted code reach ${dir}`, privileged(['chmod', 'o+x', d]), env);
    }
    if (d === dirname(d)) break;
  }
}
