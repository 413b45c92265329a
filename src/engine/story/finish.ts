/**
 * The two ends of a story that passed its rounds: its checked commit merged into the
 * epic branch (under the git-config guard, where other jobs merge too), or done without
 * a merge when the judge found the work already in place. Each saves the final record.
 */
import { followUpInPlace } from '../../core/epic/deferred.js';
import { DONE_DROPS } from '../../core/epic/rules.js';
import { formatChain, type StoryRecord } from '../../core/model.js';
import type { EpicContext } from '../context.js';
import { integrate } from '../integrate.js';
import { guardGitConfig } from './checks.js';
import type { StoryRun } from './story-run.js';

/** Done without a merge: the judge found the work already in place. */
export async function finishInPlace(
  ctx: EpicContext,
  run: StoryRun,
  chain: readonly string[],
): Promise<StoryRecord> {
  const { story, rec } = run;
  await rec.save(
    {
      status: 'done',
      executors: [...chain],
      notes: [...rec.record.notes, 'already in place'],
      finishedAt: ctx.ports.clock.now().toISOString(),
      // A follow-up round that changed nothing leaves the story's earlier merge standing.
      ...followUpInPlace(rec.record),
    },
    DONE_DROPS,
  );
  ctx.emit('status', 'done: already in place; nothing to merge', story.id, { status: 'done' });
  return rec.record;
}

/** Integrates the checked commit into the epic branch. */
export async function mergeStory(
  ctx: EpicContext,
  run: StoryRun,
  commit: string,
  chain: readonly string[],
): Promise<StoryRecord> {
  const { story, rec, branch } = run;
  await rec.save({ executors: [...chain] });
  // Merged where other jobs merge too (a story job: on GitHub's epic head), so a clash with
  // what they merged meanwhile is a merge revision here, not a failed push later.
  await ctx.followUpstream();
  const mergeNotes: string[] = [];
  // The epic's gates run the merged code; the epic tree shares the repository's configuration.
  const merged = await rec.time(
    'integrate',
    () =>
      guardGitConfig(
        ctx,
        story,
        ctx.epicTree,
        rec,
        `the merge into ${ctx.settings.epicBranch}`,
        () =>
          rec.logs.capture('merge', (log) =>
            integrate(ctx, { story, branch, commit, chain, log, notes: mergeNotes }),
          ),
      ),
    { 'epicflow.commit': commit },
    (sha) => ({ 'epicflow.merge_commit': sha }),
  );
  await rec.save(
    {
      status: 'done',
      ...(mergeNotes.length === 0 ? {} : { notes: [...rec.record.notes, ...mergeNotes] }),
      mergeCommit: merged,
      storyCommit: commit,
      finishedAt: ctx.ports.clock.now().toISOString(),
    },
    DONE_DROPS,
  );
  ctx.emit('status', `merged into ${ctx.settings.epicBranch} (${formatChain(chain)})`, story.id, {
    status: 'done',
    mergeCommit: merged,
  });
  return rec.record;
}
