/**
 * The folders above what the agent user is handed: found as they really are, and made
 * passable (not listable) for that user alone — through `sudo`, and without the kernel
 * sandbox. Where epicflow is root and the sandbox runs, no folder is opened: each step
 * reaches its folders through a mount namespace of its own (`core/sandbox.ts`
 * `throughPassage`).
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { runProcess } from './run-process.js';
import { must, onPath, type AgentAccount, type Privileged } from './agent-user.js';
import { passagesFile } from './claims.js';

/** A real path when it exists, else the real path of its nearest existing parent plus the rest. */
export async function canonical(path: string): Promise<string> {
  const abs = resolve(path);
  try {
    return await realpath(abs);
  } catch {
    const parent = dirname(abs);
    if (parent === abs) return abs;
    return join(await canonical(parent), abs.slice(parent.length + 1));
  }
}

/** Lets accounts pass through the folders above what they are handed. */
interface Passages {
  /**
   * True when the folders are opened to every user (the search bit for others), because
   * ACLs cannot be set here (no `setfacl`): the pool's description says so.
   */
  readonly open: boolean;
  /** Lets `account` pass through (not list) each folder above `dir` that others may not pass. */
  let(dir: string, account: AgentAccount): Promise<void>;
  /** Whether `account` was let through `folder` (beyond what its mode bits allow). */
  passes(account: AgentAccount, folder: string): boolean;
}

/**
 * Each folder above a handed folder that others may not pass gets an ACL entry for the
 * account's uid alone (`setfacl -m u:UID:x`), never the search bit for every user of the
 * machine (a home or `/root` would stay open to all for good). The folders are noted in
 * the account's file beside its lock, so the next process to claim the account takes the
 * entries away first (`forgetPassages`). Without `setfacl` (package `acl`), they get the
 * search bit for others, as before ACLs, and `open` says so.
 */
export async function passages(root: Privileged): Promise<Passages> {
  const setfacl = await onPath('setfacl', root.env['PATH'] ?? '/usr/bin:/bin');
  const passed = new Map<number, Set<string>>();
  return {
    open: setfacl === null,
    passes: (account, folder) => passed.get(account.uid)?.has(folder) === true,
    let: async (dir, account) => {
      const mine = passed.get(account.uid) ?? new Set<string>();
      passed.set(account.uid, mine);
      const closed: string[] = [];
      for (let d = dirname(resolve(dir)); ; d = dirname(d)) {
        const s = await stat(d).catch(() => null);
        if (s === null || !s.isDirectory()) break;
        if ((s.mode & 0o001) === 0 && !mine.has(d)) closed.push(d);
        if (d === dirname(d)) break;
      }
      if (closed.length === 0) return;
      if (setfacl === null) {
        await must(
          `cannot let untrusted code reach ${dir}`,
          root.argv(['chmod', 'o+x', '--', ...closed]),
          root.env,
        );
      } else {
        // Noted first, set after: an entry is never left unnoted.
        const r = await runProcess(
          root.argv([
            'sh',
            '-c',
            'f=$1 acl=$2 u=$3; shift 3; printf "%s\\0" "$@" >> "$f" && "$acl" -m "u:$u:x" -- "$@"',
            'sh',
            passagesFile(account.user),
            setfacl,
            String(account.uid),
            ...closed,
          ]),
          { cwd: '/', env: root.env, timeoutMs: 60_000 },
        );
        if (r.exitCode !== 0) {
          throw new EpicflowError(
            'isolation',
            `cannot let ${account.user} pass through the folders above ${dir}: setfacl failed: ${r.stderr.trim() || r.spawnError?.message || `exit code ${String(r.exitCode)}`}`,
            {
              details: [
                'the folders above the trees must be on a file system with POSIX ACLs (ext4, xfs, btrfs, tmpfs), or let others pass through them (chmod o+x)',
              ],
            },
          );
        }
      }
      for (const d of closed) mine.add(d);
    },
  };
}

/**
 * Takes away the ACL entries an earlier process gave the account (noted by `passages`),
 * before this process uses it: folders gone or moved meanwhile are skipped.
 */
export async function forgetPassages(account: AgentAccount, root: Privileged): Promise<void> {
  await must(
    `cannot take back what ${account.user} was let through`,
    root.argv([
      'sh',
      '-c',
      [
        'f=$1 u=$2',
        '[ -f "$f" ] || exit 0',
        'if command -v setfacl >/dev/null 2>&1; then',
        '  xargs -0 -r setfacl -x "u:$u" -- < "$f" 2>/dev/null',
        'fi',
        'rm -f -- "$f"',
      ].join('\n'),
      'sh',
      passagesFile(account.user),
      String(account.uid),
    ]),
    root.env,
  );
}
