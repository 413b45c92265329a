/**
 * The `workflow_dispatch` payload a runner writes to `GITHUB_EVENT_PATH` for a
 * story job (the fields epicflow reads: the inputs and the repository, with its
 * default branch).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OWNER, REPO, type ActionWorld } from './world.js';

/** Writes the payload of the dispatch with these inputs; returns its path. */
export async function dispatchEvent(
  w: ActionWorld,
  name: string,
  inputs: Readonly<Record<string, unknown>>,
): Promise<string> {
  const path = join(w.dir, `event-${name}.json`);
  const payload = {
    inputs,
    ref: 'refs/heads/main',
    repository: {
      name: REPO,
      full_name: `${OWNER}/${REPO}`,
      owner: { login: OWNER },
      default_branch: 'main',
    },
    sender: { login: 'epicflow[bot]', type: 'Bot' },
    workflow: '.github/workflows/epicflow-story.yml',
  };
  await writeFile(path, JSON.stringify(payload));
  return path;
}
