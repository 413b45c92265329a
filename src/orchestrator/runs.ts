/**
 * Which story a workflow run belongs to. A `workflow_run` webhook carries no
 * dispatch inputs, so the run id returned by the dispatch is written to a
 * small index on the state branch (`epics/runs/index.json`, one per
 * repository, compare-and-swap like every state write) and looked up when the
 * run completes.
 */
import type { GitHubCache, GitHubRepo } from '../adapters/github/index.js';
import { GitHubStateStore } from '../adapters/github/index.js';
import { EpicflowError } from '../core/errors.js';

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

/**
 * The index as this process last wrote it (by repository), so the next dispatch writes
 * without reading first: the write is a compare-and-swap on that version, and anyone
 * else's write in between turns it into a read-modify-write. A run never changes its
 * story, so a run found here needs no read at all.
 */
const written = new WeakMap<GitHubCache, Map<string, { sha: string; index: RunIndex }>>();

function memoOf(repo: GitHubRepo): Map<string, { sha: string; index: RunIndex }> {
  let memo = written.get(repo.cache);
  if (memo === undefined) {
    memo = new Map();
    written.set(repo.cache, memo);
  }
  return memo;
}

export async function rememberRun(repo: GitHubRepo, runId: number, ref: RunRef): Promise<void> {
  const memo = memoOf(repo);
  const last = memo.get(repo.fullName);
  const store = indexStore(repo);
  if (last !== undefined) {
    const index = { runs: { ...last.index.runs, [String(runId)]: ref } };
    const result = await store.writeJson(INDEX_DOC, index, last.sha);
    if (result.ok) {
      memo.set(repo.fullName, { sha: result.sha, index });
      return;
    }
    memo.delete(repo.fullName);
  }
  // Read-modify-write with compare-and-swap, remembering the version written.
  for (let attempt = 1; attempt <= 8; attempt++) {
    const doc = await store.readJson<RunIndex>(INDEX_DOC);
    const index = { runs: { ...(doc?.value.runs ?? {}), [String(runId)]: ref } };
    const result = await store.writeJson(INDEX_DOC, index, doc?.sha ?? null);
    if (result.ok) {
      memo.set(repo.fullName, { sha: result.sha, index });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * attempt));
  }
  throw new EpicflowError(
    'state',
    `GitHub state: epics/${INDEX_SCOPE}/${INDEX_DOC}.json in ${repo.fullName} kept changing under us; ` +
      `run ${runId} of story ${ref.story} was dispatched but not noted: comment \`/resume\` on epic #${ref.epic}`,
  );
}

export async function findRun(repo: GitHubRepo, runId: number): Promise<RunRef | undefined> {
  const known = memoOf(repo).get(repo.fullName)?.index.runs[String(runId)];
  if (known !== undefined) return known;
  const doc = await indexStore(repo).readJson<RunIndex>(INDEX_DOC);
  return doc?.value.runs[String(runId)];
}
