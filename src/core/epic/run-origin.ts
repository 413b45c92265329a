/**
 * Which workflow runs are story runs. A finished run is read as "story X,
 * attempt N ended" from its title, and anyone who can start a workflow run in
 * the repository can give a run that title: a pull request from a fork runs
 * the fork's copy of a workflow (any `run-name`), a push to another branch runs
 * that branch's copy, another workflow can carry the same `run-name`. epicflow
 * starts story runs one way only: a `workflow_dispatch` of the story workflow
 * on the default branch of the repository itself. A run that did not start that
 * way is not a story run, whatever its title says.
 */

/** A repository as a run names it. */
export interface RunRepository {
  readonly id: number;
  /** `owner/name`. */
  readonly fullName: string;
}

/** Where a workflow run came from, as GitHub describes it (`workflow_run` of the webhook or the API). */
export interface RunOrigin {
  /** The event that started the run: `workflow_dispatch`, `push`, `pull_request`, … */
  readonly event: string;
  /** `.github/workflows/<file>` of the workflow that ran. */
  readonly path: string;
  /** The branch the workflow ran from (a fork's branch for a fork's pull request). */
  readonly headBranch: string | null;
  /** The repository the run belongs to. */
  readonly repository: RunRepository | null;
  /** The repository its code came from: a fork, for a fork's pull request. */
  readonly headRepository: RunRepository | null;
}

/** What a story run epicflow dispatched looks like. */
export interface StoryRunSource {
  /** This repository; `id` when the caller knows it (webhook payloads carry it). */
  readonly repository: { readonly fullName: string; readonly id?: number | undefined };
  /** `.github/workflows/<story workflow>`. */
  readonly workflowPath: string;
  readonly defaultBranch: string;
}

type RunCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Whether this run is one epicflow dispatched; if not, why not (the first mismatch). */
export function checkStoryRun(origin: RunOrigin, source: StoryRunSource): RunCheck {
  const self = source.repository;
  const isSelf = (r: RunRepository | null): boolean =>
    r !== null &&
    r.fullName.toLowerCase() === self.fullName.toLowerCase() &&
    (self.id === undefined || r.id === self.id);
  if (origin.event !== 'workflow_dispatch') {
    return no(`it was started by a ${quoted(origin.event)} event, not by a workflow_dispatch`);
  }
  if (!isSelf(origin.repository)) {
    return no(`it belongs to ${repoName(origin.repository)}, not to ${self.fullName}`);
  }
  if (!isSelf(origin.headRepository) || origin.headRepository?.id !== origin.repository?.id) {
    return no(`its code came from ${repoName(origin.headRepository)}, not from ${self.fullName}`);
  }
  if (origin.path !== source.workflowPath) {
    return no(`its workflow is ${quoted(origin.path)}, not ${source.workflowPath}`);
  }
  if (origin.headBranch !== source.defaultBranch) {
    return no(
      `it ran from ${origin.headBranch === null ? 'no branch' : `branch ${quoted(origin.headBranch)}`}, not from the default branch ${source.defaultBranch}`,
    );
  }
  return { ok: true };
}

function no(reason: string): RunCheck {
  return { ok: false, reason };
}

function repoName(r: RunRepository | null): string {
  return r === null ? 'no repository' : `${quoted(r.fullName)} (id ${r.id})`;
}

/** Text from a run (branch names, paths) for a log line: JSON-quoted, so nothing in it passes as ours. */
function quoted(text: string): string {
  return JSON.stringify(text.slice(0, 200));
}
