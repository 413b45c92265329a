/**
 * A fresh tree checked out as the agent user (`TreeWriter`), where epicflow is root and
 * every step runs in the kernel sandbox: its files are that user's from the start.
 */
import { constants } from 'node:fs';
import { lchown, open, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import type { GitConfigGuard } from './config-guard.js';
import { GitRunner } from './run-git.js';

/**
 * Who a fresh tree's files are written as, where that is not epicflow: the agent user
 * every step of a run runs as, where epicflow is root and each step runs in the kernel
 * sandbox (adapters/process/untrusted.ts). Git, run as that user with epicflow's options,
 * checks the commit out into the tree, so the tree needs no giving file by file before
 * the first step (`chown -R` of every file: most of what the agent user cost a story).
 */
export interface TreeWriter {
  readonly uid: number;
  readonly gid: number;
  /**
   * A folder of the writer's own to write an index in, and how a command runs as the
   * writer, reaching that folder and `reach` (the tree, the repository's git folder) without
   * any folder above them opened to it; `done` removes the folder.
   */
  scratch(reach: readonly string[]): Promise<{
    readonly dir: string;
    readonly through: (argv: readonly string[]) => string[];
    done(): Promise<void>;
  }>;
}

/**
 * Checks a tree `worktree add --no-checkout` made out as `writer`: its files are the
 * writer's from the start. Git runs with epicflow's options and configuration guard, its
 * index in the writer's scratch folder (the admin folder stays epicflow's), and that
 * index, read without following a link, becomes the tree's. The tree's top and its
 * `.git` file stay epicflow's. Where the writer cannot read the repository (a folder
 * closed to others), epicflow checks it out itself, as without a writer.
 */
export async function checkOutAs(
  tree: {
    readonly target: string;
    /** Its admin folder (`.git/worktrees/<name>`). */
    readonly admin: string;
    /** The repository's common git folder. */
    readonly gitDir: string;
    readonly guard: GitConfigGuard;
  },
  writer: TreeWriter,
): Promise<void> {
  const { target, admin } = tree;
  const location = { gitDir: admin, workTree: target };
  const scratch = await writer.scratch([target, tree.gitDir]);
  const self = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const index = join(scratch.dir, 'index');
  const checkout = ['read-tree', '-u', '--reset', 'HEAD'];
  try {
    await lchown(target, writer.uid, writer.gid);
    const runner = new GitRunner(target, undefined, tree.guard, location);
    const asWriter = await runner.try(checkout, { indexFile: index, through: scratch.through });
    await lchown(target, self.uid, self.gid);
    if (asWriter.exitCode === 0) {
      const file = await open(
        index,
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      );
      try {
        const st = await file.stat();
        if (!st.isFile() || st.uid !== writer.uid) {
          throw new EpicflowError(
            'isolation',
            `the index written for ${target} is not a file of its writer's`,
          );
        }
        await writeFile(join(admin, 'index'), await file.readFile(), { mode: 0o644 });
      } finally {
        await file.close();
      }
      return;
    }
    // What it wrote goes; epicflow writes the tree itself.
    for (const entry of await readdir(target)) {
      if (entry !== '.git') await rm(join(target, entry), { recursive: true, force: true });
    }
    await runner.run(`cannot check out the tree at ${target}`, checkout);
  } finally {
    await scratch.done();
  }
}
