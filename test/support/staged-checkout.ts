/**
 * A copy of this checkout's files — the ones git would commit (tracked, plus untracked
 * ones not ignored) — in a folder of its own, with `node_modules` linked to the project's.
 * What a fresh clone of the current work would hold, without building into the project.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './built-package.js';

export async function stageCheckout(dest: string): Promise<void> {
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    },
  )
    .toString('utf8')
    .split('\0')
    .filter((f) => f !== '' && f !== 'node_modules' && existsSync(join(ROOT, f)));
  for (const file of listed) {
    await mkdir(dirname(join(dest, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(dest, file));
  }
  await symlink(join(ROOT, 'node_modules'), join(dest, 'node_modules'), 'dir');
}
