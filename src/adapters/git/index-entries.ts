/**
 * Reads of an index of epicflow's own (`GIT_INDEX_FILE`), from the index and objects
 * alone: what is staged against a commit, and which entries are gitlinks.
 */
import { splitNul } from './listings.js';
import type { GitRunner } from './run-git.js';

/** Paths staged in `indexFile` that differ from `head`: path → staged blob, or null when deleted. */
export async function stagedChanges(
  git: GitRunner,
  path: string,
  head: string,
  indexFile: string,
): Promise<Map<string, string | null>> {
  // `:<mode> <mode> <blob> <blob> <status>` NUL `<path>` NUL, per path; a deletion's new blob is zeros.
  const fields = splitNul(
    await git.run(
      `cannot compare the staged files with ${head} in ${path}`,
      ['diff-index', '--cached', '--no-renames', '--raw', '-z', head, '--'],
      { indexFile },
    ),
  );
  const staged = new Map<string, string | null>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const blob = (fields[i] ?? '').split(' ')[3] ?? '';
    staged.set(fields[i + 1] ?? '', /^0+$/.test(blob) ? null : blob);
  }
  return staged;
}

/** The paths of the gitlinks (submodules) in an index. */
export async function gitlinksIn(
  git: GitRunner,
  path: string,
  indexFile: string,
): Promise<string[]> {
  const fields = splitNul(
    await git.run(`cannot list the index of ${path}`, ['ls-files', '-s', '-z'], { indexFile }),
  );
  return fields.flatMap((f) => (f.startsWith('160000 ') ? [f.slice(f.indexOf('\t') + 1)] : []));
}
