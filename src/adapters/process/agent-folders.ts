/**
 * The folders above what the agent user is handed: found as they really are, and made
 * passable (not listable) for it.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { must, type Privileged } from './agent-user.js';

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

/**
 * Lets other users pass through (not list) each folder above `dir`, so the agent user
 * can reach its worktree and home: adds the "search" bit for others where it is missing.
 */
export async function traversable(dir: string, root: Privileged): Promise<void> {
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
      await must(
        `cannot let untrusted code reach ${dir}`,
        root.argv(['chmod', 'o+x', d]),
        root.env,
      );
    }
    if (d === dirname(d)) break;
  }
}
