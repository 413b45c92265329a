/**
 * The work side's end (docs/security.md, "The publish side"): the story's result written for
 * the publish job, into the folder the work job uploads as its artifact — the record
 * (`result.json`) and the story's commits as a bundle (`result.bundle`), without what the epic
 * branch has already. A story with no commit of its own writes the record alone.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeResultBundle } from '../../adapters/git/publish-git.js';
import { formatResultRecord, RESULT_FILES, type ResultRecord } from '../../core/publish/result.js';

/** Writes `result` and its bundle into `dir` (made when missing); returns the files written. */
export async function writeWorkResult(
  git: { read(what: string, args: readonly string[]): Promise<string> },
  dir: string,
  result: ResultRecord,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  if (result.storyCommit !== result.base || result.gated !== null) {
    const bundle = join(dir, RESULT_FILES.bundle);
    await writeResultBundle(git, bundle, result);
    files.push(bundle);
  }
  const record = join(dir, RESULT_FILES.record);
  await writeFile(record, formatResultRecord(result));
  files.push(record);
  return files;
}
