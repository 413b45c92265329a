/**
 * The setup cache on disk: `<dir>/<key>/` holds, as a tree, the files setup made in a
 * fresh checkout of a commit that the commit does not track. Kept by copying (never hard
 * links: a gate writing a file of its checkout must not reach the cache), written under a
 * temporary name and renamed into place, so a half-written entry is never read.
 *
 * Setup is untrusted code: what it left is read without following a link, and only files,
 * folders and links are kept. A link is kept as a link, wherever it leads (a virtual
 * environment's `bin/python` leads to the system's interpreter): its target is never read,
 * and whoever follows it later is a gate, untrusted code that could have made the same link
 * itself. When the cache is put back, nothing already in the checkout is replaced and
 * nothing is written through a link the checkout holds.
 * Modes are kept without their set-user-ID, set-group-ID and sticky bits: the copies are
 * epicflow's, never a set-user-ID program of its user that untrusted code made.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  rename,
  rm,
  symlink,
  utimes,
} from 'node:fs/promises';
import { join, normalize } from 'node:path';
import type { SetupCachePort } from '../../engine/ports.js';

function errnoCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Copies one file's bytes, opened without following a link; its mode and times kept. */
async function copyFile(from: string, to: string): Promise<boolean> {
  const source = await open(
    from,
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch(() => null);
  if (source === null) return false;
  try {
    const stat = await source.stat();
    if (!stat.isFile()) return false;
    // `wx`: never over what is there, never through a link.
    const target = await open(
      to,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    ).catch(() => null);
    if (target === null) return false;
    try {
      const chunk = Buffer.allocUnsafe(1 << 16);
      for (;;) {
        const { bytesRead } = await source.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        await target.write(chunk, 0, bytesRead);
      }
      // Permission bits only: a set-user-ID file setup made must not become epicflow's.
      await target.chmod(stat.mode & 0o777);
    } finally {
      await target.close();
    }
    await utimes(to, stat.atime, stat.mtime);
    return true;
  } finally {
    await source.close();
  }
}

interface CopyOptions {
  /** Repository-relative paths not to copy (tracked by the commit), and folders holding them. */
  readonly skip?: (rel: string, isDir: boolean) => 'copy' | 'skip' | 'descend';
}

/**
 * Copies the tree under `from` to `to`, entry by entry, without following links; an entry
 * already at `to` (or a folder there that is a link) is left as it is.
 */
async function copyTree(
  from: string,
  to: string,
  rel: string,
  options: CopyOptions,
): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const name = entry.name;
    const path = rel === '' ? name : `${rel}/${name}`;
    const source = join(from, name);
    const target = join(to, name);
    const stat = await lstat(source).catch(() => null);
    if (stat === null) continue;
    const decision = options.skip?.(path, stat.isDirectory()) ?? 'copy';
    if (decision === 'skip') continue;
    if (stat.isDirectory()) {
      const there = await lstat(target).catch(() => null);
      if (there === null) await mkdir(target, { mode: 0o700 });
      else if (!there.isDirectory()) {
        continue;
      }
      await copyTree(source, target, path, options);
      if (there === null) {
        await chmod(target, stat.mode & 0o777);
        await utimes(target, stat.atime, stat.mtime);
      }
    } else if (stat.isSymbolicLink()) {
      const link = await readlink(source).catch(() => null);
      if (link === null) continue;
      await symlink(link, target).catch(() => undefined);
    } else if (stat.isFile()) {
      await copyFile(source, target);
    }
    // Sockets, pipes and devices are never kept.
  }
}

/** The setup cache under `dir` (created when first written). */
export function setupCacheDir(dir: string): SetupCachePort {
  const entry = (key: string): string => join(dir, normalize(key).replace(/[^0-9a-f]/g, ''));
  return {
    async restore(key, tree) {
      const from = entry(key);
      const stat = await lstat(from).catch(() => null);
      if (stat === null || !stat.isDirectory()) return false;
      await copyTree(from, tree, '', {});
      return true;
    },
    async store(key, tree, tracked) {
      const folders = new Set<string>();
      for (const path of tracked) {
        for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
          folders.add(path.slice(0, i));
        }
      }
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const temp = join(dir, `.tmp-${key.slice(0, 12)}-${randomBytes(6).toString('hex')}`);
      await mkdir(temp, { mode: 0o700 });
      try {
        await copyTree(tree, temp, '', {
          // The commit's files are the checkout's own; git's folder is never copied.
          skip: (rel, isDir) =>
            rel === '.git' || tracked.has(rel)
              ? 'skip'
              : isDir && folders.has(rel)
                ? 'descend'
                : 'copy',
        });
        await rename(temp, entry(key));
      } catch (e) {
        // Another check kept the same key first: theirs stands.
        if (!['EEXIST', 'ENOTEMPTY'].includes(errnoCode(e) ?? '')) throw e;
      } finally {
        await rm(temp, { recursive: true, force: true });
      }
    },
  };
}
