/**
 * Gates, the baseline and the helpers start from the commit: each runs in a fresh checkout
 * of the commit it judges (a detached worktree epicflow makes for the step), never in a
 * tree an agent wrote. What an agent left outside its commit — an ignored module, a
 * `conftest.py`, a `node_modules` folder — is not there; what setup makes comes from setup
 * run on that checkout. After the step the checkout is removed without any git command
 * reading it: only its HEAD (a ref) is read, to name a commit the code made there.
 */
import { join } from 'node:path';
import { withGitConfigGuarded } from './guarded-config.js';
import type { GitPort, WorktreePort } from './ports.js';

/** What a checkout needs of the epic (its context has more): its git and its worktrees folder. */
interface CheckoutContext {
  readonly ports: { readonly git: Pick<GitPort, 'detachedWorktree' | 'removeWorktree'> };
  readonly settings: { readonly worktreesDir: string };
}

/** The checkout a story's gates run in: `<worktrees>/<story>.checks`. */
export function storyChecksTree(worktreesDir: string, story: string): string {
  return join(worktreesDir, `${story}.checks`);
}

/**
 * Whether a gate ran on a story's own commit (its checks' checkout, or a package folder in
 * it) rather than on the merged epic tree or the base.
 */
export function ranOnStory(cwd: string, worktreesDir: string, story: string): boolean {
  const tree = storyChecksTree(worktreesDir, story);
  return cwd === tree || cwd.startsWith(`${tree}/`);
}

/** What a step in a checkout says: a note for the record (and the git files put back, if any). */
export type CheckoutNote = (note: string, restored?: readonly string[]) => void | Promise<void>;

/**
 * Runs `work` in a fresh checkout of `sha` at `<worktrees>/<name>` (a name no story's tree
 * has: story ids have no dot), with git's configuration guarded while it runs; the
 * checkout is removed after, whatever happened. A commit the code made there is named
 * through `note` (`the gates committed …: discarded (checked as …)`).
 */
export async function fromCommit<T>(
  ctx: CheckoutContext,
  input: {
    readonly sha: string;
    /** Its folder's name under the worktrees folder. */
    readonly name: string;
    /** What runs there, for notes: `the gates`, `round 2 (x judging)`. */
    readonly during: string;
    /** Who would have committed, for its note (default `during`): `the judge (x)`. */
    readonly committer?: string;
    readonly note: CheckoutNote;
    /** epicflow's own work on the fresh checkout before any code runs there; a commit it makes is what is read. */
    readonly prepare?: ((tree: WorktreePort) => Promise<void>) | undefined;
  },
  work: (tree: WorktreePort) => Promise<T>,
): Promise<T> {
  const { git } = ctx.ports;
  const path = join(ctx.settings.worktreesDir, input.name);
  const tree = await git.detachedWorktree(path, input.sha);
  let start: string | undefined;
  try {
    await input.prepare?.(tree);
    start = input.prepare === undefined ? input.sha : await tree.head();
    return await withGitConfigGuarded(tree, input.during, () => work(tree), input.note);
  } finally {
    const head = start === undefined ? undefined : await tree.head().catch(() => null);
    if (head !== undefined && head !== start) {
      await input.note(
        `${input.committer ?? input.during} committed ${head === null ? 'over its HEAD' : head.slice(0, 12)}: discarded (checked as ${input.sha.slice(0, 12)})`,
      );
    }
    await git.removeWorktree(path);
  }
}
