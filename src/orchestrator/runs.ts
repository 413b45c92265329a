/**
 * Which story a run dispatched by an older epicflow belongs to. Those versions
 * wrote each run id to an index on the state branch (`epics/runs/index.json`)
 * because their runs had no telling title; runs now carry their ids in their
 * `run-name` (see `parseRunTitle`), so the index is only read, for runs
 * dispatched before an upgrade that complete after it.
 */
import type { GitHubRepo } from '../adapters/github/index.js';
import { GitHubStateStore } from '../adapters/github/index.js';
import type { RunRef } from '../core/epic/index.js';

export type { RunRef };

interface RunIndex {
  readonly runs: Readonly<Record<string, RunRef>>;
}

export async function findRun(repo: GitHubRepo, runId: number): Promise<RunRef | undefined> {
  // The index lives beside the epics' folders under a name no epic (an issue number) can have.
  const store = new GitHubStateStore({ repo, epic: 'runs' });
  const doc = await store.readJson<RunIndex>('index');
  return doc?.value.runs[String(runId)];
}
