/** Actions: dispatching story jobs (ids only) and reading their runs. */
import { EpicflowError } from '../../../core/errors.js';
import { attempt } from '../errors.js';
import { Resource } from './resource.js';

interface DispatchResult {
  /** null on GitHub versions that do not return run details (older GHES). */
  readonly runId: number | null;
  /** The run's page, for people. */
  readonly runUrl: string | null;
}

/** A workflow run as epicflow reads it: where it came from, its title and how far it got. */
export interface WorkflowRunSummary {
  readonly id: number;
  /** The event that started it (`workflow_dispatch`, `push`, `pull_request`, …). */
  readonly event: string;
  /** `.github/workflows/<file>`. */
  readonly path: string;
  readonly headBranch: string | null;
  /** Its evaluated `run-name`. */
  readonly displayTitle: string;
  /** `queued`, `in_progress`, `completed`, … */
  readonly status: string | null;
  readonly conclusion: string | null;
  readonly repository: { readonly id: number; readonly fullName: string } | null;
  /** Where its code came from: a fork, for a fork's pull request. */
  readonly headRepository: { readonly id: number; readonly fullName: string } | null;
}

interface RawRun {
  readonly id: number;
  readonly event: string;
  readonly path: string;
  readonly head_branch: string | null;
  readonly display_title: string;
  readonly status: string | null;
  readonly conclusion: string | null;
  readonly repository?: { readonly id: number; readonly full_name: string } | null;
  readonly head_repository?: { readonly id: number; readonly full_name: string } | null;
}

function runSummary(r: RawRun): WorkflowRunSummary {
  const repo = (x: RawRun['repository']): WorkflowRunSummary['repository'] =>
    x === undefined || x === null ? null : { id: x.id, fullName: x.full_name };
  return {
    id: r.id,
    event: r.event,
    path: r.path,
    headBranch: r.head_branch,
    displayTitle: r.display_title,
    status: r.status,
    conclusion: r.conclusion,
    repository: repo(r.repository),
    headRepository: repo(r.head_repository),
  };
}

/** Dispatch inputs are ids only: issue text never reaches a workflow (docs/security.md). */
const DISPATCH_INPUT = /^[A-Za-z0-9._-]{1,100}$/;
const WORKFLOW_FILE = /^[A-Za-z0-9._-]+\.ya?ml$/;

export class Workflows extends Resource {
  /**
   * Starts one story job. Inputs are ids only; anything else is refused before any
   * request, so issue text can never reach a workflow through them.
   */
  async dispatchWorkflow(input: {
    workflow: string;
    ref: string;
    inputs: Readonly<Record<string, string | number>>;
  }): Promise<DispatchResult> {
    if (!WORKFLOW_FILE.test(input.workflow)) {
      throw new EpicflowError(
        'internal',
        `refusing to dispatch ${JSON.stringify(input.workflow)}: not a workflow file name`,
      );
    }
    const inputs: Record<string, string> = {};
    for (const [key, value] of Object.entries(input.inputs)) {
      const text = String(value);
      if (!DISPATCH_INPUT.test(key) || !DISPATCH_INPUT.test(text)) {
        throw new EpicflowError(
          'internal',
          `refusing to dispatch ${input.workflow}: input ${JSON.stringify(key)} must be an id ` +
            `matching ${DISPATCH_INPUT.source} (issue text never goes into dispatch inputs)`,
        );
      }
      inputs[key] = text;
    }
    const { data, status } = await attempt(
      `dispatch ${input.workflow} on ${input.ref} in ${this.fullName}`,
      'Actions: read and write',
      () =>
        this.octokit.rest.actions.createWorkflowDispatch({
          ...this.base,
          workflow_id: input.workflow,
          ref: input.ref,
          inputs,
          return_run_details: true,
        }),
    );
    const details = ((status as number) === 200 ? (data as unknown) : undefined) as
      { workflow_run_id?: number; html_url?: string } | undefined;
    return { runId: details?.workflow_run_id ?? null, runUrl: details?.html_url ?? null };
  }

  /** One workflow run of this repository, as the API describes it. */
  async workflowRun(runId: number): Promise<WorkflowRunSummary> {
    const { data } = await attempt(
      `read workflow run ${runId} of ${this.fullName}`,
      'Actions: read and write',
      () => this.octokit.rest.actions.getWorkflowRun({ ...this.base, run_id: runId }),
    );
    return runSummary(data);
  }

  /**
   * Runs of one workflow, newest first, created since `createdSince` (ISO time):
   * one page of up to 100, with the total GitHub counted, so the caller knows
   * whether the page holds them all.
   */
  async workflowRuns(input: {
    readonly workflow: string;
    readonly event: string;
    readonly branch: string;
    readonly createdSince: string;
  }): Promise<{ readonly total: number; readonly runs: readonly WorkflowRunSummary[] }> {
    if (!WORKFLOW_FILE.test(input.workflow)) {
      throw new EpicflowError(
        'internal',
        `refusing to list runs of ${JSON.stringify(input.workflow)}: not a workflow file name`,
      );
    }
    const { data } = await attempt(
      `list the runs of ${input.workflow} in ${this.fullName}`,
      'Actions: read and write',
      () =>
        this.octokit.rest.actions.listWorkflowRuns({
          ...this.base,
          workflow_id: input.workflow,
          event: input.event,
          branch: input.branch,
          created: `>=${input.createdSince}`,
          per_page: 100,
        }),
    );
    return { total: data.total_count, runs: data.workflow_runs.map(runSummary) };
  }
}
