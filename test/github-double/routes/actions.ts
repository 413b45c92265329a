/**
 * Actions: workflows are the files under `.github/workflows/` on the default branch of
 * the bare repository (as on GitHub, a workflow must exist there to be dispatchable);
 * dispatches create queued runs that tests finish with `gh.act.completeWorkflowRun`.
 */
import {
  HttpError,
  paginate,
  param,
  type Json,
  type RestContext,
  type RouteTable,
} from '../context.js';
import type { Double } from '../double.js';
import { runNaming } from '../run-name.js';
import { nextId, now, type RepoRec, type RunRec } from '../state.js';

function repoOf(ctx: RestContext): RepoRec {
  return ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
}

export async function listWorkflows(
  double: Double,
  repo: RepoRec,
): Promise<{ id: number; path: string }[]> {
  const tree = await double.git.listTree(repo.dir, `refs/heads/${repo.defaultBranch}`, true);
  return tree
    .filter((e) => e.type === 'blob' && /^\.github\/workflows\/[^/]+\.ya?ml$/.test(e.path))
    .map((e) => ({ id: workflowIdOf(double, repo, e.path), path: e.path }));
}

async function workflowOf(ctx: RestContext, repo: RepoRec): Promise<{ id: number; path: string }> {
  const key = param(ctx, 'workflow_id');
  const wf = (await listWorkflows(ctx.double, repo)).find(
    (w) => String(w.id) === key || w.path.split('/').pop() === key,
  );
  if (!wf) throw new HttpError(404, 'Not Found');
  return wf;
}

export function runJson(double: Double, repo: RepoRec, run: RunRec): Json {
  const own = double.repoJson(repo);
  const head = run.headRepoKey === undefined ? undefined : double.state.repos.get(run.headRepoKey);
  return double.fixtures.workflowRun(
    repo,
    run,
    double.user(run.actor),
    own,
    head === undefined ? own : double.repoJson(head),
  );
}

/** The id GitHub gives the workflow at `path` (one per path, whether or not it is on the default branch). */
export function workflowIdOf(double: Double, repo: RepoRec, path: string): number {
  let id = repo.workflowIds.get(path);
  if (id === undefined) {
    id = nextId(double.state);
    repo.workflowIds.set(path, id);
  }
  return id;
}

function filterRuns(ctx: RestContext, runs: readonly RunRec[]): RunRec[] {
  const q = ctx.query;
  return runs
    .filter((r) => !q.get('branch') || r.headBranch === q.get('branch'))
    .filter((r) => !q.get('event') || r.event === q.get('event'))
    .filter((r) => !q.get('actor') || r.actor.toLowerCase() === q.get('actor')?.toLowerCase())
    .filter((r) => !q.get('head_sha') || r.headSha === q.get('head_sha'))
    .filter((r) => {
      const s = q.get('status');
      return !s || r.status === s || r.conclusion === s;
    })
    .sort((a, b) => b.id - a.id);
}

export const actionRoutes: RouteTable = {
  'GET /repos/{owner}/{repo}/actions/workflows': async (ctx) => {
    const repo = repoOf(ctx);
    const all = await listWorkflows(ctx.double, repo);
    const { page, headers } = paginate(ctx, all);
    return {
      status: 200,
      body: {
        total_count: all.length,
        workflows: page.map((w) => ctx.double.fixtures.workflow(repo, w.id, w.path)),
      },
      headers,
    };
  },
  'GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}': async (ctx) => {
    const repo = repoOf(ctx);
    const wf = await workflowOf(ctx, repo);
    return { status: 200, body: ctx.double.fixtures.workflow(repo, wf.id, wf.path) };
  },
  'POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches': async (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const wf = await workflowOf(ctx, repo);
    const ref = String(ctx.body['ref']).replace(/^refs\/heads\//, '');
    const sha = await ctx.double.git.resolveRef(repo.dir, `refs/heads/${ref}`);
    if (!sha) throw new HttpError(422, `No ref found for: ${ref}`);
    const inputs = (ctx.body['inputs'] as Record<string, unknown> | undefined) ?? {};
    // The run is named from the workflow file at the dispatched commit, as on GitHub.
    const file = await ctx.double.git.readFile(repo.dir, sha, wf.path);
    const naming = runNaming(file?.content.toString('utf8'), wf.path, inputs);
    const id = nextId(ctx.double.state);
    const t = now();
    const run: RunRec = {
      repoKey: repo.key,
      id,
      nodeId: `WFR_kwLO${id}`,
      workflowId: wf.id,
      workflowPath: wf.path,
      name: naming.name,
      displayTitle: naming.displayTitle,
      ref,
      headBranch: ref,
      headSha: sha,
      event: 'workflow_dispatch',
      inputs,
      actor: actor.login,
      status: 'queued',
      conclusion: null,
      createdAt: t,
      updatedAt: t,
      jobs: [],
    };
    repo.runs.push(run);
    const at = ctx.double.clock.now();
    const dispatch = {
      repoKey: repo.key,
      workflowId: wf.id,
      workflowPath: wf.path,
      ref,
      inputs,
      actor: actor.login,
      runId: id,
      at,
    };
    repo.dispatches.push(dispatch);
    ctx.double.stats.timeline.push({
      kind: 'dispatch',
      at,
      repo: repo.key,
      workflow: wf.path,
      inputs,
      runId: id,
    });
    for (const listener of ctx.double.dispatchListeners) listener(dispatch);
    ctx.double.emit('workflow_run', 'requested', {
      workflow_run: runJson(ctx.double, repo, run),
      workflow: ctx.double.fixtures.workflow(repo, wf.id, wf.path),
      ...ctx.double.hookContext(repo, actor),
    });
    if (ctx.body['return_run_details'] !== true) return { status: 204 };
    const api = ctx.double.fixtures.repoApi(repo);
    return {
      status: 200,
      body: {
        workflow_run_id: id,
        run_url: `${api}/actions/runs/${id}`,
        html_url: `${ctx.double.url}/${repo.owner}/${repo.name}/actions/runs/${id}`,
      },
    };
  },
  'GET /repos/{owner}/{repo}/actions/runs': (ctx) => {
    const repo = repoOf(ctx);
    const all = filterRuns(ctx, repo.runs);
    const { page, headers } = paginate(ctx, all);
    return {
      status: 200,
      body: {
        total_count: all.length,
        workflow_runs: page.map((r) => runJson(ctx.double, repo, r)),
      },
      headers,
    };
  },
  'GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs': async (ctx) => {
    const repo = repoOf(ctx);
    const wf = await workflowOf(ctx, repo);
    const all = filterRuns(
      ctx,
      repo.runs.filter((r) => r.workflowId === wf.id),
    );
    const { page, headers } = paginate(ctx, all);
    return {
      status: 200,
      body: {
        total_count: all.length,
        workflow_runs: page.map((r) => runJson(ctx.double, repo, r)),
      },
      headers,
    };
  },
  'GET /repos/{owner}/{repo}/actions/runs/{run_id}': (ctx) => {
    const repo = repoOf(ctx);
    const run = repo.runs.find((r) => r.id === Number(param(ctx, 'run_id')));
    if (!run) throw new HttpError(404, 'Not Found');
    return { status: 200, body: runJson(ctx.double, repo, run) };
  },
  'GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs': (ctx) => {
    const repo = repoOf(ctx);
    const run = repo.runs.find((r) => r.id === Number(param(ctx, 'run_id')));
    if (!run) throw new HttpError(404, 'Not Found');
    const { page, headers } = paginate(ctx, run.jobs);
    return {
      status: 200,
      body: {
        total_count: run.jobs.length,
        jobs: page.map((j) => ctx.double.fixtures.job(repo, run, j)),
      },
      headers,
    };
  },
};
