/**
 * Reads "the code you start from" of a story (core/prompt/starting-code.ts decides which
 * files, in what order, within what budget): the tree of the commit the story starts
 * from, then the blobs the section may still show, a few at a time, from git's objects
 * through the git port — never through a work tree, so no link is followed.
 */
import type { Story } from '../../core/model.js';
import {
  addStartingBlobs,
  selectStartingCode,
  startingBlobsToRead,
  type StartingCode,
} from '../../core/prompt/index.js';
import type { EpicContext } from '../context.js';

export async function readStartingCode(
  ctx: EpicContext,
  story: Story,
  commit: string,
): Promise<StartingCode> {
  const limits = ctx.config.prompt.startingCode;
  const { git } = ctx.ports;
  const files = limits.budget > 0 ? await git.treeFiles(commit) : [];
  let code = selectStartingCode(ctx.settings.plan, story, commit, files, limits);
  for (let batch = startingBlobsToRead(code); batch.length > 0; batch = startingBlobsToRead(code)) {
    const blobs = await git.readBlobs(batch.map((f) => f.object));
    code = addStartingBlobs(
      code,
      new Map(batch.map((f) => [f.object, blobs.get(f.object) ?? null])),
    );
  }
  return code;
}
