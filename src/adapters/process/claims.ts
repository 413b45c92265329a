/**
 * Claims of the agent users' pool: which process holds which user, by locks the kernel
 * holds for it (`flock`), in a folder only root may enter.
 */
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { must, type Privileged } from './agent-user.js';

/** The agent users' locks (a folder only root may enter: no agent can open, let alone lock, them). */
const LOCKS = '/run/epicflow-agent-users';

/** Where the folders an account was let through are noted (beside its lock: root's alone). */
export const passagesFile = (user: string): string => join(LOCKS, `${user}.passages`);
const POOL_SIZE = 32;
/** flock's exit code when another process holds the lock. */
const LOCK_HELD = 75;

/**
 * Holds a lock (flock) on `file` for as long as this process lives, exclusive or, with
 * `shared`, shared: a small child (`flock` or `sh`, then `cat`, as root) waits on a pipe
 * from this process and exits when the pipe closes — when this process ends, however it
 * ends. The kernel decides between processes that race for one lock, and a lock never
 * outlives its process. Resolves `false` when another process holds it (alone, for a
 * shared claim).
 */
function holdLock(
  file: string,
  root: Privileged,
  /**
   * A lock shared by every process whose steps run in the kernel sandbox: taken exclusive
   * when no one holds it, `first` run, then shared; taken shared beside the others when
   * they hold it (one of them ran `first`); refused while a process holds it exclusive.
   */
  shared?: { readonly first: () => Promise<void> },
): Promise<boolean> {
  const argv = root.argv(
    shared === undefined
      ? [
          'flock',
          '--exclusive',
          '--nonblock',
          '--conflict-exit-code',
          String(LOCK_HELD),
          file,
          'sh',
          '-c',
          'echo held; exec cat >/dev/null',
        ]
      : [
          'sh',
          '-c',
          [
            // The claims of the sharing processes one at a time (their gate), so that two
            // arriving together do not both find the user held alone by the other.
            'exec 8>>"$1.gate" 9>>"$1" || exit 1',
            'flock -x -w 300 8 || exit 1',
            // Alone: this process does the first one's duties, then shares. Converting a
            // lock is not atomic: one taken exclusive meanwhile makes this a refusal.
            'if flock -x -n 9; then echo first; read -r _ || exit 1; flock -s -n 9 || exit $2',
            'elif ! flock -s -n 9; then exit $2; fi',
            'exec 8>&-',
            'echo held; exec cat >/dev/null',
          ].join('\n'),
          'sh',
          file,
          String(LOCK_HELD),
        ],
  );
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0] ?? 'flock', argv.slice(1), {
      cwd: '/',
      env: { ...root.env },
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
    let duties: Promise<void> | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (shared !== undefined && out.startsWith('first\n')) {
        duties ??= shared.first().then(
          () => void child.stdin.write('\n'),
          (e: unknown) => {
            // Its `read` fails: it exits, and the lock goes with it.
            child.stdin.end();
            settle(() => reject(e));
          },
        );
        out = out.slice('first\n'.length);
      }
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

/** The users this process holds, by pool name, in the order claimed. */
const held = new Map<string, string[]>();
let claiming: Promise<unknown> = Promise.resolve();

/**
 * Claims one more user of the pool `base`, `base-2` … `base-32` that no live process
 * holds (this one included), for as long as this process lives (see `holdLock`); with
 * `shared`, the first one no process holds alone, beside the others that share it.
 */
export function claimUser(
  base: string,
  root: Privileged,
  /**
   * For a process whose every step runs in the kernel sandbox: the first user of the pool
   * that no process holds alone, shared with every other such process (the kernel keeps
   * their steps apart); `first` runs for the first of them, while it holds the user alone.
   */
  shared?: (user: string) => Promise<void>,
): Promise<string> {
  const claim = claiming.then(async () => {
    await must(
      'cannot prepare the agent user locks',
      root.argv(['sh', '-c', 'mkdir -p "$1" && chmod 0700 "$1"', 'sh', LOCKS]),
      root.env,
    );
    const mine = held.get(base) ?? [];
    for (let n = 1; n <= POOL_SIZE; n++) {
      const user = n === 1 ? base : `${base}-${n}`;
      if (mine.includes(user)) continue;
      const lock = join(LOCKS, `${user}.lock`);
      if (
        await holdLock(lock, root, shared === undefined ? undefined : { first: () => shared(user) })
      ) {
        held.set(base, [...mine, user]);
        return user;
      }
    }
    throw new EpicflowError(
      'isolation',
      `every agent user ${base} … ${base}-${POOL_SIZE} is in use on this machine`,
    );
  });
  claiming = claim.catch(() => undefined);
  return claim;
}
