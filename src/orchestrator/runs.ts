/**
 * What the orchestrator asks GitHub about story runs: where a run came from,
 * when the event did not say, and whether the runs of attempts dispatched long
 * ago exist at all. Which story a run belongs to is in its title (the story
 * workflow's `run-name`, see `parseRunTitle`).
 */
import type { GitHubRepo, WorkflowRunSummary } from '../adapters/github/index.js';
import type {
  DispatchedRun,
  OverdueDispatch,
  RunOrigin,
  StoryRunSource,
} from '../core/epic/index.js';
import { checkStoryRun, parseRunTitle } from '../core/epic/index.js';

function originOf(run: WorkflowRunSummary): RunOrigin {
  return {
    event: run.event,
    path: run.path,
    headBranch: run.headBranch,
    repository: run.repository,
    headRepository: run.headRepository,
  };
}

/** Where a run came from, as GitHub's API describes it (one request). */
export async function readRunOrigin(repo: GitHubRepo, runId: number): Promise<RunOrigin> {
  return originOf(await repo.workflowRun(runId));
}

/** Minutes before the earliest dispatch the listing starts: clocks of the App and GitHub differ. */
const CLOCK_SLACK_MS = 5 * 60_000;

/**
 * What the story workflow's runs say about these overdue attempts of one epic, in one
 * listing: the dispatches of the story workflow on the default branch created since
 * the earliest of them. An attempt without a run counts as `none` only when the
 * listing held every run GitHub counted; otherwise it is left out (not known).
 * Runs that are not story runs (see `checkStoryRun`) are not looked at.
 */
export async function dispatchedRuns(
  repo: GitHubRepo,
  input: {
    readonly epic: number;
    readonly overdue: readonly OverdueDispatch[];
    readonly workflow: string;
    readonly source: StoryRunSource;
  },
): Promise<Record<string, DispatchedRun>> {
  const { overdue } = input;
  if (overdue.length === 0) return {};
  const earliest = Math.min(...overdue.map((o) => Date.parse(o.dispatchedAt)));
  const { total, runs } = await repo.workflowRuns({
    workflow: input.workflow,
    event: 'workflow_dispatch',
    branch: input.source.defaultBranch,
    createdSince: new Date(earliest - CLOCK_SLACK_MS).toISOString(),
  });
  const out: Record<string, DispatchedRun> = {};
  for (const run of runs) {
    if (!checkStoryRun(originOf(run), input.source).ok) continue;
    const ref = parseRunTitle(run.displayTitle);
    if (ref === null || ref.epic !== input.epic) continue;
    const wanted = overdue.find((o) => o.story === ref.story && o.attempt === ref.attempt);
    if (wanted === undefined) continue;
    const ended = run.status === 'completed';
    // Two runs of one attempt (a redelivered dispatch): one still going keeps it running.
    if (out[ref.story]?.kind === 'running') continue;
    out[ref.story] = ended
      ? { attempt: ref.attempt, kind: 'ended', conclusion: run.conclusion ?? 'unknown' }
      : { attempt: ref.attempt, kind: 'running' };
  }
  if (runs.length >= total) {
    for (const o of overdue) out[o.story] ??= { attempt: o.attempt, kind: 'none' };
  }
  return out;
}
