/**
 * Handing folders to an agent account for one step, and taking them back (see untrusted.ts).
 *
 * Giving makes what a folder holds the account's (`chown -h`, never following a link), but
 * only what is not the account's already, and never a file with more than one name: a hard
 * link the agent made to a file elsewhere is never given, nor taken. A tree (a folder
 * holding `.git`) keeps its top folder epicflow's, with the sticky bit and the account's
 * group, and its `.git` epicflow's: the code may add and remove its own files there, never
 * rename or replace the `.git`.
 *
 * Taking back, once no process of the account is left, is one of two:
 * - **the whole folder** (homes always; trees where epicflow is not root or the step ran
 *   without the kernel sandbox): a file with more than one name becomes a copy of its own,
 *   every file changed since the step began gets a new modification time, then everything
 *   is epicflow's again, readable and writable by it;
 * - **the tree's top alone** (a tree, where epicflow is root and the step ran in the kernel
 *   sandbox): the top folder is epicflow's again and closed to every other user (0700), so no
 *   path leads the account into the tree; what the step made inside stays the account's
 *   until the next step or the tree's removal. Root reads and writes it as it is. A hard
 *   link is the one way around a closed folder, and in the sandbox each folder the step is
 *   given is a mount of its own, which no hard link crosses: a link the step makes joins
 *   two names inside the tree. The next step's giving then changes only what epicflow
 *   wrote in between: both cost what changed, not what the tree holds.
 *
 * Where epicflow is root and every step runs in the kernel sandbox, the trees epicflow makes
 * for steps are written as the account from the start (git checks them out as it:
 * `TreeWriter`, adapters/git/git.ts), so giving a fresh tree changes only its top and what
 * epicflow wrote since; and a folder epicflow just made empty (a home, a `/tmp`) is given
 * without starting a process.
 *
 * Removing a folder the code was given (a checkout after its steps, a tree before it is
 * checked out anew) needs no taking back: it is removed with root's rights, never
 * following a link.
 */
import { randomUUID } from 'node:crypto';
import { chmod, lchown, lstat, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { must, type AgentAccount, type Privileged } from './agent-user.js';

/**
 * Giving a folder (`sh -c` with the owner `uid:gid`, the uid, the folder, epicflow's uid,
 * and for a tree its top's owner and the path of its `.git` as a pattern): what is not the
 * account's — folders, links, files with one name — becomes the account's. Where nothing
 * in it is the account's, another's or a file with another name (a fresh checkout), one
 * `chown -R --from` of epicflow's does it, several times faster than a `chown` per path.
 */
const GIVE = [
  'o=$1 u=$2 dir=$3 me=$4 top=$5 git=$6',
  'if [ -n "$top" ]; then',
  '  chown -h -- "$top" "$dir" && chmod 1775 -- "$dir" || exit 1',
  '  set -- -mindepth 1 -path "$git" -prune -o',
  'else set --; fi',
  'other=$(find -P "$dir" "$@" \\( -user "$u" -o ! -user "$me" -o -type f -links +1 \\) -print -quit)',
  'if [ -z "$other" ] && [ -n "$top" ]; then',
  '  find -P "$dir" -mindepth 1 -maxdepth 1 ! -name .git -exec chown -R -h --from="$me" -- "$o" {} +',
  'elif [ -z "$other" ]; then chown -R -h --from="$me" -- "$o" "$dir"',
  'else',
  '  find -P "$dir" "$@" ! -user "$u" \\( -type d -o -type l -o -links 1 \\) -exec chown -h -- "$o" {} +',
  'fi',
].join('\n');

/**
 * Taking a folder back whole (`sh -c` with the owner, the folder, and a mark or ''): a file
 * with more than one name is replaced by a copy of its own (its other name may be anywhere:
 * the file there is never touched, and the folder shares nothing with it any more); the
 * files changed after the mark (all of them without one) get a modification time of now;
 * then everything is the owner's, readable and writable by it.
 */
const RECLAIM = [
  'set -e',
  'copy=\'for f; do t=$(mktemp -- "$f.XXXXXX") && cat -- "$f" > "$t" &&',
  '  { [ ! -x "$f" ] || chmod +x -- "$t"; } && mv -f -- "$t" "$f"; done\'',
  'if [ -n "$3" ]; then',
  '  find -P "$2" ! -type d \\( -type f -links +1 -exec sh -c "$copy" sh {} + -o -cnewer "$3" -exec touch -h -c -- {} + \\)',
  'else',
  '  find -P "$2" ! -type d \\( -type f -links +1 -exec sh -c "$copy" sh {} + -o -exec touch -h -c -- {} + \\)',
  'fi',
  'chown -R -h -- "$1" "$2"',
  'find -P "$2" \\( \\( -type d ! -perm -u=rwx \\) -o \\( ! -type d ! -type l ! -perm -u=rw \\) \\) -exec chmod u+rwX -- {} +',
].join('\n');

/** A path as a `find -path` pattern that matches only itself. */
const literal = (path: string): string => path.replace(/[\\*?[\]]/g, '\\$&');

interface HandOver {
  /** Before a step: the folders are the account's to write (see the module comment). */
  give(account: AgentAccount, folders: readonly string[]): Promise<void>;
  /** A mark of the kernel's clock, once the folders are given: what the step changes is newer. */
  mark(): Promise<string>;
  /** After a step, no process of the account left: the folders are epicflow's again. */
  takeBack(folders: readonly string[], since?: string, walled?: boolean): Promise<void>;
  /** Removes folders the code was given, with root's rights, never following a link. */
  discard(folders: readonly string[]): Promise<void>;
}

export function handOver(input: {
  readonly root: Privileged;
  /** epicflow's own user. */
  readonly self: { readonly uid: number; readonly gid: number };
  /** A folder of epicflow's own, closed to the agents, for the clock's marks. */
  readonly marks: string;
}): HandOver {
  const { root, self, marks } = input;
  /** Trees are taken back by their top alone where epicflow is root (see the module comment). */
  const byTop = root.privilege === 'root';

  const give = async (account: AgentAccount, folders: readonly string[]): Promise<void> => {
    for (const dir of folders) {
      let entries: string[];
      try {
        entries = await readdir(dir);
      } catch {
        continue; // not there (yet): nothing to give
      }
      if (entries.length === 0 && root.privilege === 'root') {
        // A folder epicflow just made (a home, a /tmp): no walk, no process.
        const st = await lstat(dir);
        if (st.isDirectory() && st.uid !== account.uid) await lchown(dir, account.uid, account.gid);
        continue;
      }
      const tree = entries.includes('.git');
      await must(
        `cannot give ${dir} to ${account.user}`,
        root.argv([
          'sh',
          '-c',
          GIVE,
          'sh',
          `${account.uid}:${account.gid}`,
          String(account.uid),
          dir,
          String(self.uid),
          tree ? `${self.uid}:${account.gid}` : '',
          tree ? literal(join(dir, '.git')) : '',
        ]),
        root.env,
      );
    }
  };

  /**
   * A mark of the kernel's clock, the one files take their change time from (a file in
   * `marks`), made once a step's folders are handed over: it waits for that clock's next
   * tick, so a change the step makes is strictly newer than the mark, and the handing
   * over itself is not.
   */
  const mark = async (): Promise<string> => {
    const at = join(marks, `.since-${randomUUID()}`);
    await writeFile(at, '', { flag: 'wx', mode: 0o600 });
    const probe = `${at}-next`;
    await writeFile(probe, '', { flag: 'wx', mode: 0o600 });
    const then = (await stat(at, { bigint: true })).ctimeNs;
    for (let i = 0; (await stat(probe, { bigint: true })).ctimeNs <= then; i++) {
      if (i === 2000) throw new EpicflowError('isolation', 'the clock of file times stands still');
      await new Promise((r) => setTimeout(r, 1));
      const now = new Date();
      await utimes(probe, now, now); // a change time of now
    }
    await rm(probe);
    return at;
  };

  /**
   * Takes folders back. Taken back whole, every file changed after `since` (a `mark`;
   * without one, or when the clock went back since: every file) first gets a new
   * modification time, whatever time the step gave it, so a change never looks like the
   * file epicflow knew.
   */
  const takeBack = async (
    folders: readonly string[],
    since?: string,
    walled = false,
  ): Promise<void> => {
    /** `since`, unless the clock went back since; asked only for a folder taken back whole. */
    let checked: Promise<string | undefined> | undefined;
    const mark = (): Promise<string | undefined> =>
      (checked ??= (async () => {
        if (since === undefined) return undefined;
        const check = join(marks, `.now-${randomUUID()}`);
        await writeFile(check, '', { flag: 'wx', mode: 0o600 });
        const then = (await stat(since, { bigint: true })).ctimeNs;
        const now = (await stat(check, { bigint: true })).ctimeNs;
        await rm(check);
        return now <= then ? undefined : since;
      })());
    for (const dir of folders) {
      const st = await lstat(dir).catch(() => null);
      if (st === null || !st.isDirectory()) continue;
      const tree = (await lstat(join(dir, '.git')).catch(() => null)) !== null;
      if (tree && walled && byTop) {
        // Owner first: from then on the account cannot change the folder's mode.
        await lchown(dir, self.uid, self.gid);
      } else {
        // One privileged process for all (sudo costs a start each). `find` and `-h` never
        // follow a link; what epicflow may already read and write is not chmod-ed again.
        await must(
          `cannot take ${dir} back from untrusted code`,
          root.argv([
            'sh',
            '-c',
            RECLAIM,
            'sh',
            `${self.uid}:${self.gid}`,
            dir,
            (await mark()) ?? '',
          ]),
          root.env,
        );
      }
      // Closed to others until it is handed over again (a home holds credentials).
      await chmod(dir, 0o700);
    }
  };

  const discard = async (folders: readonly string[]): Promise<void> => {
    for (const dir of folders) {
      if (root.privilege === 'root') await rm(dir, { recursive: true, force: true });
      else {
        await must(
          `cannot remove ${dir}`,
          root.argv(['rm', '-rf', '--one-file-system', '--', dir]),
          root.env,
        );
      }
    }
  };

  return { give, mark, takeBack, discard };
}
