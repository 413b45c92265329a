/**
 * Which story a workflow run belongs to. A `workflow_run` webhook carries no
 * dispatch inputs, so the run id returned by the dispatch is written to a
 * small index on the state branch (`epics/runs/index.json`, one per
 * repository, compare-and-swap like every state write) and looked up when the
 * run completes.
 */
import type { GitHubRepo } from '../adapters/github/index.js';
import { GitHubStateStore } from '../adapters/github/index.js';

export interface RunRef {
  readonly epic: number;
  readonly story: string;
  readonly attempt: number;
}

interface RunIndex {
  readonly runs: Readonly<Record<string, RunRef>>;
}

/** The index lives beside the epics' folders under a name no epic (an issue number) can have. */
const INDEX_SCOPE = 'runs';
const INDEX_DOC = 'index';

function indexStore(repo: GitHubRepo): GitHubStateStore {
  return new GitHubStateStore({ repo, epic: INDEX_SCOPE });
}

export async function rememberRun(repo: GitHubRepo, runId: number, ref: RunRef): Promise<void> {
  await indexStore(repo).updateJson<RunIndex>(INDEX_DOC, (current) => ({
    runs: { ...(current?.runs ?? {}), [String(runId)]: ref },
  }));
}

export async function findRun(repo: GitHubRepo, runId: number): Promise<RunRef | undefined> {
  const doc = await indexStore(repo).readJson<RunIndex>(INDEX_DOC);
  return doc?.value.runs[String(runId)];
}
