/**
 * A story job's commit point: the merged epic head pushed to GitHub. A rejected push
 * changed nothing there, so the story merges again on the new head and tries again, at
 * most `MAX_PUBLISH_ATTEMPTS` times; any other refusal is said with what to do.
 */
import type { RemoteGit } from '../adapters/git/remote-git.js';
import type { PushRefusalReason } from '../core/epic/index.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import type { Story } from '../core/model.js';
import { withGitConfigGuarded } from '../engine/guarded-config.js';
import { integrate } from '../engine/integrate.js';
import type { openEpic } from '../engine/run-epic.js';
import { StoryStop } from '../engine/stop.js';
import { pushAgainOnMove, type PushRound } from './job-shell.js';

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

interface PublishInput {
  readonly story: Story;
  readonly branch: string;
  /** The checked story commit. */
  readonly commit: string;
  readonly chain: readonly string[];
  /** Collects a note for each time git's configuration was put back after a merge retry. */
  readonly restores: string[];
}

/**
 * Publishes the merged epic head. The push is the commit point: a rejected
 * push changed nothing on GitHub, so the story merges again on the new head
 * (the engine's `integrate`: merge, gates, compare-and-swap) and tries again.
 */
export async function publish(
  ctx: Awaited<ReturnType<typeof openEpic>>,
  remote: RemoteGit,
  input: PublishInput,
): Promise<Published> {
  const { epicBranch } = ctx.settings;
  const out = await pushAgainOnMove(remote, epicBranch, MAX_PUBLISH_ATTEMPTS, async (n) => {
    if (n > 1) return mergeAgain(ctx, remote, input);
    return { push: ctx.epicHead };
  });
  switch (out.kind) {
    case 'pushed':
      if (out.pushes > 1) ctx.emit('story', `published after ${out.pushes} pushes`, input.story.id);
      return { ok: true, sha: out.sha, pushes: out.pushes };
    case 'stopped':
      return { ok: false, pushes: out.pushes, reason: out.value };
    case 'refused':
      return { ok: false, pushes: out.pushes, refused: out.refused, reason: out.reason };
    case 'kept-moving':
      return {
        ok: false,
        pushes: out.pushes,
        reason: `${epicBranch} kept moving: ${MAX_PUBLISH_ATTEMPTS} pushes were rejected; comment /retry ${input.story.id}`,
      };
  }
}

/** The epic branch moved on GitHub: the story merges again on its new head (or says why not). */
async function mergeAgain(
  ctx: Awaited<ReturnType<typeof openEpic>>,
  remote: RemoteGit,
  input: PublishInput,
): Promise<PushRound<string>> {
  const { epicBranch } = ctx.settings;
  ctx.emit('story', `${epicBranch} moved on GitHub; merging again`, input.story.id);
  const heads = await remote.fetch([epicBranch]);
  const head = heads.get(epicBranch);
  if (head === undefined) return { stop: `${epicBranch} was deleted on GitHub while merging` };
  const { git } = ctx.ports;
  if (!(await git.updateRef(`refs/heads/${epicBranch}`, head, ctx.epicHead))) {
    return { stop: `${epicBranch} changed in the job checkout while merging` };
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
    if (e instanceof StoryStop) return { stop: e.reason };
    if (isEpicflowError(e)) return { stop: describeError(e).split('\n').join(' | ') };
    throw e;
  }
  return { push: ctx.epicHead };
}
