/**
 * Where the tests' temporary folders go: their repositories, worktrees, homes and Action
 * jobs are made under the system's temporary folder (`os.tmpdir()`, which reads `TMPDIR`),
 * and most of what the suite costs a disk is making files there. On the 2-core development
 * machine, making a file on its disk (ext4, mounted with `discard`) takes about 0.7 ms of
 * system time, against 0.02 ms in memory: 12,000 files took 8 s there and 0.2 s in
 * `/dev/shm`. So the suite puts them in memory where the machine has a memory-backed
 * `/dev/shm` with room to spare (docs/testing.md, "Temporary folders"):
 * `/dev/shm/epicflow-tests-<uid>`, open to every user and sticky as `/tmp` is (the tests
 * run jobs as other users, which make their own folders there).
 *
 * `EPICFLOW_TEST_TMPDIR=<folder>` chooses the folder; `EPICFLOW_TEST_TMPDIR=system` keeps
 * the system's own.
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, statfsSync } from 'node:fs';

/** Below this much free room in `/dev/shm`, the system's temporary folder is kept. */
const ROOM = 4 * 1024 ** 3;

/**
 * The temporary folder the tests should use, made if missing, or null for the system's
 * own (`TMPDIR` as it is).
 *
 * @param {Record<string, string | undefined>} env
 * @param {string} shm the memory-backed folder to use when it is one
 * @param {number} room the free room it must have, in bytes
 * @returns {string | null}
 */
export function testTempFolder(env = process.env, shm = '/dev/shm', room = ROOM) {
  const chosen = env['EPICFLOW_TEST_TMPDIR'];
  if (chosen === 'system') return null;
  if (chosen !== undefined && chosen !== '') {
    mkdirSync(chosen, { recursive: true });
    return chosen;
  }
  if (!inMemory(shm)) return null;
  const { bavail, bsize } = statfsSync(shm);
  if (bavail * bsize < room) return null;
  return ownFolder(`${shm}/epicflow-tests-${process.getuid?.() ?? 0}`);
}

/**
 * `dir`, made if missing, open to all and sticky; refused when it is there as a link or as
 * another user's.
 *
 * @param {string} dir
 * @returns {string}
 */
export function ownFolder(dir) {
  const uid = process.getuid?.() ?? 0;
  mkdirSync(dir, { recursive: true });
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid) {
    throw new Error(
      `${dir} is not a folder of uid ${uid}: remove it, or set EPICFLOW_TEST_TMPDIR to a folder of your own (docs/testing.md, "Temporary folders")`,
    );
  }
  chmodSync(dir, 0o1777);
  return dir;
}

/** Whether `path` is the mount point of a memory-backed file system (tmpfs). */
function inMemory(path) {
  let mounts;
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return false;
  }
  return mounts
    .split('\n')
    .map((line) => line.split(' '))
    .some(([, at, type]) => at === path && type === 'tmpfs');
}
