/** The index of a tree as epicflow left it. */
import { lstatSync } from 'node:fs';
import { rm } from 'node:fs/promises';

/**
 * A tree's index is epicflow's: git trusts its flags (`skip-worktree`,
 * `assume-unchanged`) and its stat data, so an index written by code that ran in the
 * tree (as epicflow's own user, locally) could hide a change from a commit or keep a
 * file from being checked out. The guard keeps the identity of the index file as
 * epicflow's last command left it; before the next command, an index that is not that one (or one never
 * seen) is replaced by a fresh one from HEAD, whose entries carry no flag and no stat
 * data (git then reads every file). Shared by every `Worktree` of one tree.
 */
export class IndexGuard {
  private digest: string | undefined;

  constructor(readonly file: string) {}

  /**
   * What identifies the file as written: its inode, size and change time (set by the
   * kernel on every write and every `utimes`, so it cannot be put back), to the
   * nanosecond. Reads no content, and at once (not through the thread pool): this runs
   * around every git command.
   */
  private current(): string {
    try {
      const st = lstatSync(this.file, { bigint: true });
      if (!st.isFile()) return `other ${st.mode}`;
      return `${st.dev}:${st.ino}:${st.size}:${st.ctimeNs}:${st.mtimeNs}`;
    } catch {
      return 'missing';
    }
  }

  /** Whether the index is the one epicflow's last command left. */
  trusted(): boolean {
    return this.digest !== undefined && this.current() === this.digest;
  }

  /** Before a command: an index epicflow did not leave is put aside for a fresh one. */
  async check(rebuild: () => Promise<void>): Promise<void> {
    if (this.trusted()) return;
    await rm(this.file, { recursive: true, force: true });
    await rebuild();
  }

  settle(): void {
    this.digest = this.current();
  }
}
