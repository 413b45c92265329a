/**
 * Merged-ness read back from the epic branch's history: the `Epicflow-Story`
 * trailers of its first-parent merge commits (see core/merge-message.ts).
 */
import { STORY_TRAILER } from '../../core/merge-message.js';
import type { Git } from './git.js';

/**
 * Story id → merge commit, from merge commits on the epic branch's first-parent
 * history with an `Epicflow-Story` trailer. The newest merge of a story wins.
 * A missing epic branch means nothing merged yet.
 */
export async function readMergedStories(
  git: Git,
  epicBranch: string,
): Promise<Map<string, string>> {
  const ref = epicBranch.startsWith('refs/') ? epicBranch : `refs/heads/${epicBranch}`;
  const merged = new Map<string, string>();
  if ((await git.revParse(ref)) === null) return merged;
  const out = await git.read(`cannot read the history of ${epicBranch}`, [
    'log',
    '--first-parent',
    '--merges',
    `--format=%H%x00%(trailers:key=${STORY_TRAILER},valueonly,separator=%x01)%x1e`,
    ref,
    '--',
  ]);
  for (const record of out.split('\x1e')) {
    const [sha, values] = record.trim().split('\0');
    if (!sha || values === undefined) continue;
    for (const id of values.split('\x01')) {
      const story = id.trim();
      if (story !== '' && !merged.has(story)) merged.set(story, sha);
    }
  }
  return merged;
}
