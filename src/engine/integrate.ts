/**
 * Integrate (docs/architecture.md, the story lifecycle): one merge at a time. Before merging, the epic
 * branch must be where epicflow left it, or the epic halts (an agent or a
 * person moved it). The merge happens in the epic's own integration tree (a
 * detached HEAD), the gates run on a fresh checkout of the merge against the epic baseline
 * (unless its tree is the checked story commit's, whose gate runs stand), and only
 * then the ref moves, by compare-and-swap: that update is the commit point.
 */
import { EpicflowError } from '../core/errors.js';
import { triageGate, type GateRun } from '../core/gates/index.js';
import { setupFailedReason } from '../core/story/index.js';
import { formatDuration } from '../core/report/index.js';
import type { Story } from '../core/model.js';
import type { EpicContext, OutputLog } from './context.js';
import { buildMergeMessage } from '../core/merge-message.js';
import type { MergeResult } from './ports.js';
import { StoryStop } from './stop.js';
import { settleGates, type SettledGates } from './settle-gates.js';
import { fromCommit } from './checkout.js';

/** The checkout of a merge its gates run in (`<worktrees>/_merged`). */
const MERGED_TREE = '_merged';

function outsideChange(ctx: EpicContext, message: string): never {
  ctx.setHalt({ kind: 'outside-change', message });
  throw new EpicflowError('halt', message);
}

export async function integrate(
  ctx: EpicContext,
  input: {
    story: Story;
    branch: string;
    /** The story commit that was checked: merged by sha, or the story fails. */
    commit: string;
    chain: readonly string[];
    /** Gets the whole output of the merged tree's setup and gates (the story's log). */
    log?: OutputLog;
    /** Gets a note for each gate found flaky, or unstable on the base, on the merged tree. */
    notes?: string[];
  },
): Promise<string> {
  const { git } = ctx.ports;
  const { epicBranch } = ctx.settings;
  // Waiting for the merge lock is an event: a user sees why a passed story is not merged yet.
  const askedAt = ctx.ports.clock.now().getTime();
  const waited = ctx.merge.busy;
  if (waited) {
    const holder = ctx.merge.heldFor;
    ctx.emit(
      'story',
      `waiting for the merge lock${holder === undefined ? '' : ` (held for ${holder})`}`,
      input.story.id,
      { wait: 'merge lock', ...(holder === undefined ? {} : { heldFor: holder }) },
    );
  }
  return ctx.merge.run(async () => {
    if (waited) {
      const waitMs = ctx.ports.clock.now().getTime() - askedAt;
      ctx.emit('story', `took the merge lock after ${formatDuration(waitMs)}`, input.story.id, {
        wait: 'merge lock',
        waitMs,
      });
    }
    if (ctx.halt?.kind === 'outside-change') {
      throw new EpicflowError('halt', ctx.halt.message);
    }
    const head = await git.revParse(`refs/heads/${epicBranch}`);
    if (head !== ctx.epicHead) {
      outsideChange(
        ctx,
        `${epicBranch} was moved outside epicflow (expected ${ctx.epicHead.slice(0, 12)}, found ${head?.slice(0, 12) ?? 'no branch'})`,
      );
    }
    const tree = ctx.epicTree;
    // The integration tree is ours (gates run in checkouts of their own): put it at the head.
    if ((await tree.head()) !== head || !(await tree.isClean())) await tree.resetHard(head);
    const baseline = await ctx.baseline(head);
    if ((await tree.head()) !== head) await tree.resetHard(head);

    // Only the commit the checks judged is merged: a branch that moved since (a process the
    // agent left behind committed, a gate pushed) fails the story instead.
    const branchHead = await git.revParse(`refs/heads/${input.branch}`);
    if (branchHead !== input.commit) {
      throw new StoryStop(
        'failed',
        `${input.branch} moved after it was checked (checked ${input.commit.slice(0, 12)}, now ${branchHead?.slice(0, 12) ?? 'gone'}): not merged`,
      );
    }
    ctx.emit('story', `merging into ${epicBranch}`, input.story.id);
    const message = buildMergeMessage({
      story: input.story.id,
      title: input.story.title,
      chain: input.chain,
    });
    /** The merge with every conflict settled for the epic; never left half done. */
    const keepingEpic = async (): Promise<string> => {
      try {
        return await tree.mergeKeepingOurs(input.commit, message);
      } catch (e) {
        await tree.resetHard(head);
        throw e;
      }
    };
    let merge: MergeResult = await tree.mergeNoFf(input.commit, message);
    // Conflicts with stories merged after this one started: their side wins, the rest of
    // the story merges, and the gates judge the merged tree (the checked commit's no longer).
    if (!merge.ok) {
      await tree.resetHard(head);
      const note = `conflicts with ${epicBranch} in ${merge.conflicts.join(', ')}: the epic's side kept`;
      ctx.emit('story', note, input.story.id);
      input.notes?.push(note);
      merge = { ok: true, sha: await keepingEpic() };
    }
    ctx.checkpoint('mid-merge', input.story.id);
    // The story was based on the epic head: the merged tree is the checked commit's, whose
    // gates ran in this process on a checkout of it. Running them again would judge the
    // same files twice.
    const checked = ctx.checkedRuns.get(input.commit);
    // The checked commit is an ancestor of the merge: nothing changed when their trees are one.
    const same =
      checked !== undefined &&
      (git.sameTree(input.commit, merge.sha) ??
        (await tree.changedPaths(input.commit, merge.sha)).length === 0);
    if (same) {
      ctx.emit('story', 'the merged tree is the checked commit’s: its gates stand', input.story.id);
    }
    const merged = merge.sha;
    const standing = (runs: GateRun[]): SettledGates => ({
      runs,
      verdicts: runs.map((r, i) => triageGate(r, baseline[i])),
      notes: [],
    });
    // Setup and the gates on a fresh checkout of the merge, never in the integration tree.
    const { setup, settled } = same
      ? { setup: null, settled: standing(checked ?? []) }
      : await fromCommit(
          ctx,
          {
            sha: merged,
            name: MERGED_TREE,
            during: 'the merged tree’s gates',
            note: (note, restored) => {
              ctx.emit(
                'story',
                note,
                input.story.id,
                restored === undefined ? undefined : { restored },
              );
              input.notes?.push(note);
            },
          },
          async (checkout) => {
            const failed = await ctx.setupOn(checkout.path, merged, input.log);
            if (failed !== null) return { setup: failed, settled: standing([]) };
            return {
              setup: null,
              settled: await settleGates(ctx, {
                cwd: checkout.path,
                story: input.story.id,
                baseline,
                withLog: (_i, work) => work(input.log),
                // The base is the epic head: its gate runs again in a checkout of its own.
                againOnBase: (i, log) => ctx.rerunBaseline(head, i, log),
              }),
            };
          },
        );
    const { runs, verdicts } = settled;
    for (const note of settled.notes) {
      ctx.emit('story', note, input.story.id);
      input.notes?.push(note);
    }
    if (ctx.interrupt.signal.aborted) {
      await tree.resetHard(head);
      throw new StoryStop('waiting', 'interrupted while merging; rerun to continue');
    }
    const failing = verdicts.filter((v) => v.status === 'new');
    if (setup !== null || failing.length > 0) {
      await tree.resetHard(head);
      const lines =
        setup !== null
          ? setupFailedReason(setup, false, 3)
          : failing
              .map((v) => `${v.command}: ${v.newLines.slice(0, 5).join('; ') || 'failed'}`)
              .join(' | ');
      throw new StoryStop(
        'failed',
        `epic gates failed after merging; merge undone: ${lines}`,
        setup !== null
          ? undefined
          : failing.map((v) => ({
              command: v.command,
              lines: v.newLines,
              output: runs.find((r) => r.command === v.command)?.output ?? '',
            })),
      );
    }
    if (!(await git.updateRef(`refs/heads/${epicBranch}`, merged, head))) {
      await tree.resetHard(head);
      outsideChange(
        ctx,
        `${epicBranch} was moved outside epicflow while merging ${input.story.id}`,
      );
    }
    ctx.epicHead = merged;
    await ctx.rememberBaseline(merged, runs);
    ctx.checkpoint('after-merge', input.story.id);
    return merged;
  }, `merging ${input.story.id}`);
}
