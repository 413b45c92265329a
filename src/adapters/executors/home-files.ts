/**
 * Files epicflow writes into an executor's home between turns (a prompt, a CLI's
 * settings, `auth.json`). The home is handed to untrusted code during each turn, so
 * whatever it holds afterwards is the agent's doing: a folder or file on the way may
 * be a symbolic link to a place the agent wants epicflow to write (epicflow may be
 * root). Nothing is ever written through a link: every folder below the home is
 * checked with lstat (a link or anything but a folder is removed — the link itself,
 * never what it points to — and made again), and the file is created anew with
 * O_NOFOLLOW | O_CREAT | O_EXCL after the old one is unlinked.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, rm, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { EpicflowError } from '../../core/errors.js';

/** The home, made when missing; refused when it is not a plain folder (a link, a file). */
export async function ensureHome(home: string): Promise<void> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  const st = await lstat(home);
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new EpicflowError('isolation', `the executor home ${home} is not a folder of epicflow's`);
  }
}

/** Writes `content` to `path`, which must be inside `home` (see the module comment). */
export async function writeHomeFile(
  home: string,
  path: string,
  content: string,
  mode = 0o600,
): Promise<void> {
  const rel = relative(home, path);
  if (rel === '' || isAbsolute(rel) || rel.split(sep).includes('..')) {
    throw new EpicflowError('internal', `${path} is not inside the executor home ${home}`);
  }
  await ensureHome(home);
  const parts = rel.split(sep);
  let dir = home;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    const st = await lstat(dir).catch(() => null);
    if (st !== null && (st.isSymbolicLink() || !st.isDirectory())) {
      await rm(dir, { recursive: true, force: true });
    }
    if (st === null || st.isSymbolicLink() || !st.isDirectory()) {
      await mkdir(dir, { mode: 0o700 });
    }
  }
  await unlink(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'EISDIR' || e.code === 'EPERM')
      return rm(path, { recursive: true, force: true });
    if (e.code !== 'ENOENT') throw e;
    return undefined;
  });
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    await handle.writeFile(content, 'utf8');
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}
