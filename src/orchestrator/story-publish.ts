/**
 * A story job's commit point: the merged epic head pushed to GitHub. A rejected push
 * changed nothing there, so the story merges again on the new head and tries again, at
 * most `MAX_PUBLISH_ATTEMPTS` times; any other refusal is said with what to do.
 */
import type { RemoteGit } from '../adapters/git/remote-git.js';
import { describePushRefusal, type PushRefusalReason } from '../core/epic/index.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import type { Story } from '../core/model.js';
import { withGitConfigGuarded } from '../engine/guarded-config.js';
import { integrate } from '../engine/integrate.js';
import type { openEpic } from '../engine/run-epic.js';
import { StoryStop } from '../engine/stop.js';

/** Pushes of the epic head before giving up (each after a fresh merge and gate run). */
const MAX_PUBLISH_ATTEMPTS = 5;

/** Why GitHub refused a push, as the git adapter tells it (never read from message text). */
export type PushRefusal = Exclude<PushRefusalReason, 'stale'>;

type Published =
  | { readonly ok: true; readonly sha: string; readonly pushes: number }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly pushes: number;
      /** Set when GitHub refused the push itself (not a merge retry that failed). */
      readonly refused?: PushRefusal;
    };

/**
 * Publishes the merged epic head. The push is the commit point: a rejected
 * push changed nothing on GitHub, so the story merges again on the new head
 * (the engine's `integrate`: merge, gates, compare-and-swap) and tries again.
 */
export async function publish(
  ctx: Awaited<ReturnType<typeof openEpic>>,
  remote: RemoteGit,
  input: {
    story: Story;
    branch: string;
    /** The checked story commit. */
    commit: string;
    chain: readonly string[];
    /** Collects a note for each time git's configuration was put back after a merge retry. */
    restores: string[];
  },
): Promise<Published> {
  const { epicBranch } = ctx.settings;
  for (let pushes = 1; ; pushes++) {
    const pushed = await remote.push(ctx.epicHead, epicBranch);
    if (pushed.ok) {
      if (pushes > 1) ctx.emit('story', `published after ${pushes} pushes`, input.story.id);
      return { ok: true, sha: ctx.epicHead, pushes };
    }
    if (pushed.reason !== 'stale') {
      return {
        ok: false,
        pushes,
        refused: pushed.reason,
        reason: describePushRefusal(epicBranch, pushed.reason, pushed.detail),
      };
    }
    if (pushes >= MAX_PUBLISH_ATTEMPTS) {
      return {
        ok: false,
        pushes,
        reason: `${epicBranch} kept moving: ${MAX_PUBLISH_ATTEMPTS} pushes were rejected; comment /retry ${input.story.id}`,
      };
    }
    ctx.emit('story', `${epicBranch} moved on GitHub; merging again`, input.story.id);
    const heads = await remote.fetch([epicBranch]);
    const head = heads.get(epicBranch);
    if (head === undefined) {
      return { ok: false, pushes, reason: `${epicBranch} was deleted on GitHub while merging` };
    }
    const { git } = ctx.ports;
    if (!(await git.updateRef(`refs/heads/${epicBranch}`, head, ctx.epicHead))) {
      return {
        ok: false,
        pushes,
        reason: `${epicBranch} changed in the job checkout while merging`,
      };
    }
    ctx.epicHead = head;
    // The merge runs the gates on code the agent wrote: git's configuration is put
    // back before the next push carries the token (see guardGitConfig in engine/story/checks.ts).
    try {
      await withGitConfigGuarded(
        ctx.epicTree,
        'the merge retry',
        () => integrate(ctx, input),
        (note, restored) => {
          input.restores.push(note);
          ctx.emit('story', note, input.story.id, { restored });
        },
      );
    } catch (e) {
      if (e instanceof StoryStop) return { ok: false, pushes, reason: e.reason };
      if (isEpicflowError(e))
        return { ok: false, pushes, reason: describeError(e).split('\n').join(' | ') };
      throw e;
    }
  }
}
