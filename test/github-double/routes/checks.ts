/**
 * Check runs and commit statuses, as CI reports them on a commit: a GitHub App (or a
 * workflow's `GITHUB_TOKEN`) creates and updates check runs; anyone with write access
 * posts commit statuses. GraphQL reads them back as a commit's `statusCheckRollup`.
 */
import { HttpError, param, str, type Json, type RestContext, type RouteTable } from '../context.js';
import type { Double } from '../double.js';
import { nextId, now, type CheckRunRec, type RepoRec, type StatusRec } from '../state.js';

function repoOf(ctx: RestContext): RepoRec {
  return ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
}

/** The full sha of a commit of the repository, or GitHub's 422 naming what was given. */
async function commitSha(d: Double, repo: RepoRec, given: string): Promise<string> {
  const sha = /^[0-9a-f]{4,40}$/i.test(given) ? await d.git.revParse(repo.dir, given) : undefined;
  if (sha === undefined || (await d.git.objectType(repo.dir, sha)) !== 'commit') {
    throw new HttpError(422, `No commit found for SHA: ${given}`);
  }
  return sha;
}

/** Only a GitHub App creates and updates check runs (GitHub's own words when another tries). */
function requireApp(ctx: RestContext, repo: RepoRec): string {
  const actor = ctx.double.requireWrite(repo, ctx.actor);
  if (!ctx.viaApp) throw new HttpError(403, 'You must authenticate via a GitHub App.');
  return actor.login;
}

type RunStatus = CheckRunRec['status'];

/**
 * Status, conclusion and times after a create or an update: a conclusion completes the
 * run; `completed` needs one.
 */
function settle(
  body: Json,
  current: Pick<CheckRunRec, 'status' | 'conclusion' | 'completedAt'>,
): Pick<CheckRunRec, 'status' | 'conclusion' | 'completedAt'> {
  const conclusion = str(body, 'conclusion') ?? null;
  const status: RunStatus =
    conclusion !== null
      ? 'completed'
      : ((str(body, 'status') as RunStatus | undefined) ?? current.status);
  if (status === 'completed' && conclusion === null && current.conclusion === null) {
    throw new HttpError(422, 'Validation Failed: conclusion is required when status is completed');
  }
  if (status !== 'completed') return { status, conclusion: null, completedAt: null };
  return {
    status,
    conclusion: conclusion ?? current.conclusion,
    completedAt: str(body, 'completed_at') ?? current.completedAt ?? now(),
  };
}

function runJson(d: Double, repo: RepoRec, run: CheckRunRec): Json {
  const app = d.state.app;
  const json =
    app !== undefined && app.bot.login === run.by
      ? d.fixtures.app(app, d.user('double-app-owner'))
      : d.fixtures.actionsApp(d.user('github'));
  return d.fixtures.checkRun(repo, run, json);
}

function runOf(ctx: RestContext, repo: RepoRec): CheckRunRec {
  const id = Number(param(ctx, 'check_run_id'));
  const run = repo.checkRuns.find((r) => r.id === id);
  if (run === undefined) throw new HttpError(404, 'Not Found');
  return run;
}

const STATES: readonly StatusRec['state'][] = ['error', 'failure', 'pending', 'success'];

export const checkRoutes: RouteTable = {
  'POST /repos/{owner}/{repo}/check-runs': async (ctx) => {
    const d = ctx.double;
    const repo = repoOf(ctx);
    const by = requireApp(ctx, repo);
    const headSha = await commitSha(d, repo, String(ctx.body['head_sha']));
    const id = nextId(d.state);
    const output = (ctx.body['output'] ?? {}) as Json;
    const run: CheckRunRec = {
      id,
      nodeId: Buffer.from(`check-run:${id}`).toString('base64'),
      headSha,
      name: String(ctx.body['name']),
      ...settle(ctx.body, { status: 'queued', conclusion: null, completedAt: null }),
      startedAt: str(ctx.body, 'started_at') ?? now(),
      detailsUrl: str(ctx.body, 'details_url') ?? null,
      externalId: str(ctx.body, 'external_id') ?? '',
      title: str(output, 'title') ?? null,
      summary: str(output, 'summary') ?? null,
      by,
    };
    repo.checkRuns.push(run);
    return { status: 201, body: runJson(d, repo, run) };
  },
  'GET /repos/{owner}/{repo}/check-runs/{check_run_id}': (ctx) => {
    const repo = repoOf(ctx);
    return { status: 200, body: runJson(ctx.double, repo, runOf(ctx, repo)) };
  },
  'PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}': (ctx) => {
    const repo = repoOf(ctx);
    const by = requireApp(ctx, repo);
    const run = runOf(ctx, repo);
    if (run.by !== by) throw new HttpError(403, 'Resource not accessible by integration');
    Object.assign(run, settle(ctx.body, run));
    const name = str(ctx.body, 'name');
    if (name !== undefined) run.name = name;
    const details = str(ctx.body, 'details_url');
    if (details !== undefined) run.detailsUrl = details;
    const output = ctx.body['output'] as Json | undefined;
    if (output !== undefined) {
      run.title = str(output, 'title') ?? run.title;
      run.summary = str(output, 'summary') ?? run.summary;
    }
    return { status: 200, body: runJson(ctx.double, repo, run) };
  },
  'POST /repos/{owner}/{repo}/statuses/{sha}': async (ctx) => {
    const d = ctx.double;
    const repo = repoOf(ctx);
    const creator = d.requireWrite(repo, ctx.actor);
    const sha = await commitSha(d, repo, param(ctx, 'sha'));
    const state = str(ctx.body, 'state') as StatusRec['state'];
    if (!STATES.includes(state))
      throw new HttpError(422, `Validation Failed: state ${String(state)}`);
    const id = nextId(d.state);
    const st: StatusRec = {
      id,
      nodeId: Buffer.from(`status:${id}`).toString('base64'),
      sha,
      state,
      context: str(ctx.body, 'context') ?? 'default',
      description: str(ctx.body, 'description') ?? null,
      targetUrl: str(ctx.body, 'target_url') ?? null,
      creator: creator.login,
      createdAt: now(),
    };
    repo.statuses.push(st);
    return {
      status: 201,
      body: d.fixtures.commitStatus(repo, st, creator),
      headers: { location: `${d.fixtures.repoApi(repo)}/statuses/${sha}` },
    };
  },
};

/**
 * What GitHub's rollup lists for a commit: the last check run of each name (per App) and
 * the last status of each context (contexts compare without case), check runs first.
 */
export function rollupOf(
  repo: RepoRec,
  sha: string,
): { readonly runs: CheckRunRec[]; readonly statuses: StatusRec[] } {
  const lastBy = <T>(list: readonly T[], key: (t: T) => string): T[] => [
    ...new Map(list.map((t) => [key(t), t] as const)).values(),
  ];
  return {
    runs: lastBy(
      repo.checkRuns.filter((r) => r.headSha === sha),
      (r) => `${r.by}\0${r.name}`,
    ),
    statuses: lastBy(
      repo.statuses.filter((s) => s.sha === sha),
      (s) => s.context.toLowerCase(),
    ),
  };
}
