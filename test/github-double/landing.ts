/**
 * What happens around an epic's landing, as GitHub does it: a commit pushed to a
 * branch (the `push` webhook), a pull request merged (`PUT …/pulls/{n}/merge`: the
 * merge commit on the base, `push` and `pull_request.closed` with `merged: true`, the
 * head branch deleted when the repository says `delete_branch_on_merge`), or closed
 * without a merge (`pull_request.closed`, `merged: false`).
 */
import type { Json } from './context.js';
import { HttpError } from './context.js';
import type { Double } from './double.js';
import { now, type IssueRec, type RepoRec, type UserRec } from './state.js';

const ZERO = '0'.repeat(40);

/** The `push` webhook of `ref` moving from `before` (null: created) to `after`. */
export async function emitPush(
  d: Double,
  repo: RepoRec,
  who: UserRec,
  branch: string,
  before: string | null,
  after: string,
): Promise<void> {
  const c = await d.git.readCommit(repo.dir, after);
  if (c === undefined) throw new Error(`github-double: no commit ${after}`);
  const html = `${d.url}/${repo.owner}/${repo.name}`;
  const person = { name: who.login, email: `${who.login}@users.noreply.github.com` };
  const head = {
    id: after,
    tree_id: c.tree,
    distinct: true,
    message: c.message,
    timestamp: now(),
    url: `${html}/commit/${after}`,
    author: { ...person, username: who.login },
    committer: { ...person, username: who.login },
    added: [],
    removed: [],
    modified: [],
  };
  // A push's repository is GitHub's older shape: times in epoch seconds, the owner's
  // name and email, `master_branch`, and the organization by login (absent for a user).
  const context = d.hookContext(repo, who);
  const full = context['repository'] as Json;
  const { organization, owner, ...rest } = full;
  const epoch = (t: unknown): number => Math.floor(Date.parse(String(t)) / 1000);
  const repository: Json = {
    ...rest,
    owner: { ...(owner as Json), name: repo.owner, email: null },
    created_at: epoch(full['created_at']),
    pushed_at: epoch(full['pushed_at']),
    master_branch: repo.defaultBranch,
    stargazers: 0,
    ...(organization === null || organization === undefined
      ? {}
      : { organization: String((organization as Json)['login']) }),
  };
  d.emit('push', undefined, {
    ref: `refs/heads/${branch}`,
    before: before ?? ZERO,
    after,
    created: before === null,
    deleted: false,
    forced: false,
    base_ref: null,
    compare: `${html}/compare/${(before ?? ZERO).slice(0, 12)}...${after.slice(0, 12)}`,
    commits: [head],
    head_commit: head,
    pusher: person,
    ...context,
    repository,
  });
}

/** A commit of `files` on top of `branch`, pushed by `who` (the `push` webhook follows). */
export async function pushFiles(
  d: Double,
  repo: RepoRec,
  who: UserRec,
  input: { branch: string; files: Record<string, string | null>; message: string },
): Promise<string> {
  return d.withRepoLock(repo, async () => {
    const ref = `refs/heads/${input.branch}`;
    const before = (await d.git.resolveRef(repo.dir, ref)) ?? null;
    const made = await d.git.commitFiles(
      repo.dir,
      before,
      input.files,
      input.message,
      d.identity(who),
      ref,
    );
    if (made === undefined) throw new Error(`github-double: ${input.branch} moved meanwhile`);
    await emitPush(d, repo, who, input.branch, before, made.commit);
    return made.commit;
  });
}

/** The `pull_request.closed` webhook of `pr` as it is now. */
async function emitClosed(d: Double, repo: RepoRec, pr: IssueRec, who: UserRec): Promise<void> {
  const { pullJson } = await import('./routes/pulls.js');
  d.emit('pull_request', 'closed', {
    number: pr.number,
    pull_request: await pullJson(d, repo, pr),
    ...d.hookContext(repo, who),
  });
}

type Pull = IssueRec & { pull: NonNullable<IssueRec['pull']> };

/**
 * Merges an open pull request with a merge commit, as `PUT …/pulls/{n}/merge` does:
 * 405 when it is a draft, closed or conflicting; 409 when `sha` is not its head.
 */
export async function mergePull(
  d: Double,
  repo: RepoRec,
  pr: Pull,
  who: UserRec,
  options: {
    sha?: string | undefined;
    title?: string | undefined;
    message?: string | undefined;
  } = {},
): Promise<{ sha: string; merged: true; message: string }> {
  const merged = await d.withRepoLock(repo, async () => {
    if (pr.state !== 'open' || pr.pull.merged) {
      throw new HttpError(405, 'Pull Request is not mergeable');
    }
    if (pr.pull.draft) throw new HttpError(405, 'Pull Request is still a draft');
    const baseRef = `refs/heads/${pr.pull.base}`;
    const base = await d.git.resolveRef(repo.dir, baseRef);
    const head = await d.git.resolveRef(repo.dir, `refs/heads/${pr.pull.head}`);
    if (base === undefined || head === undefined) {
      throw new HttpError(405, 'Pull Request is not mergeable');
    }
    if (options.sha !== undefined && options.sha !== head) {
      throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
    }
    const title =
      options.title ?? `Merge pull request #${pr.number} from ${repo.owner}/${pr.pull.head}`;
    const message = `${title}\n\n${options.message ?? pr.title}`;
    const sha = await d.git.mergeCommit(repo.dir, base, head, message, d.identity(who));
    if (sha === 'conflict') throw new HttpError(405, 'Pull Request is not mergeable');
    if (!(await d.git.updateRef(repo.dir, baseRef, sha, base))) {
      throw new HttpError(409, 'Base branch was modified. Review and try the merge again.');
    }
    pr.pull.merged = true;
    pr.pull.mergeCommitSha = sha;
    pr.pull.mergedBy = who.login;
    pr.state = 'closed';
    pr.closedAt = now();
    pr.updatedAt = pr.closedAt;
    if (repo.deleteBranchOnMerge === true) {
      await d.git.deleteRef(repo.dir, `refs/heads/${pr.pull.head}`);
    }
    return { sha, base };
  });
  await emitPush(d, repo, who, pr.pull.base, merged.base, merged.sha);
  await emitClosed(d, repo, pr, who);
  return { sha: merged.sha, merged: true, message: 'Pull Request successfully merged' };
}

/** Closes an open pull request without merging it (`PATCH` with `state: closed`). */
export async function closePull(d: Double, repo: RepoRec, pr: Pull, who: UserRec): Promise<void> {
  if (pr.state !== 'open') return;
  pr.state = 'closed';
  pr.closedAt = now();
  pr.updatedAt = pr.closedAt;
  await emitClosed(d, repo, pr, who);
}

/** `mergeable` of an open pull request: whether its head merges into its base cleanly. */
export async function mergeableOf(d: Double, repo: RepoRec, pr: Pull): Promise<Json> {
  if (pr.state !== 'open') return { mergeable: null, mergeable_state: 'unknown' };
  const base = await d.git.resolveRef(repo.dir, `refs/heads/${pr.pull.base}`);
  const head = await d.git.resolveRef(repo.dir, `refs/heads/${pr.pull.head}`);
  if (base === undefined || head === undefined) {
    return { mergeable: null, mergeable_state: 'unknown' };
  }
  const clean = await d.git.mergesCleanly(repo.dir, base, head);
  return {
    mergeable: clean,
    mergeable_state: !clean ? 'dirty' : pr.pull.draft ? 'draft' : 'clean',
  };
}

/**
 * `GET /repos/{owner}/{repo}/compare/{base}...{head}` for two branches or commits of the
 * repository: `ahead_by`/`behind_by` of head against base, their merge base, and the
 * commits head has that base has not (oldest first, 250 at most, as GitHub lists them).
 */
export async function compareJson(d: Double, repo: RepoRec, basehead: string): Promise<Json> {
  const m = /^(.+?)\.\.\.(.+)$/.exec(basehead);
  if (m === null) throw new HttpError(404, 'Not Found');
  const [, baseName = '', headName = ''] = m;
  const resolve = async (name: string): Promise<string> => {
    const sha =
      (await d.git.resolveRef(repo.dir, `refs/heads/${name}`)) ??
      (/^[0-9a-f]{40}$/.test(name) ? name : undefined);
    if (sha === undefined || (await d.git.readCommit(repo.dir, sha)) === undefined) {
      throw new HttpError(404, 'Not Found');
    }
    return sha;
  };
  const base = await resolve(baseName);
  const head = await resolve(headName);
  const { runGit } = await import('./git.js');
  const text = async (args: string[]): Promise<string> => {
    const r = await runGit(repo.dir, args);
    if (r.code !== 0) throw new Error(`git ${args[0] ?? ''} failed: ${r.stderr.toString()}`);
    return r.stdout.toString('utf8').trim();
  };
  const [behind = 0, ahead = 0] = (
    await text(['rev-list', '--left-right', '--count', `${base}...${head}`])
  )
    .split(/\s+/)
    .map(Number);
  const mergeBase = await text(['merge-base', base, head]);
  const shas = (await text(['rev-list', '--reverse', '--max-count=250', `${base}..${head}`]))
    .split('\n')
    .filter(Boolean);
  const commit = async (sha: string): Promise<Json> => {
    const c = await d.git.readCommit(repo.dir, sha);
    if (c === undefined) throw new Error(`github-double: no commit ${sha}`);
    return d.fixtures.commit(repo, c);
  };
  const api = d.fixtures.repoApi(repo);
  const html = `${d.url}/${repo.owner}/${repo.name}`;
  return {
    url: `${api}/compare/${basehead}`,
    html_url: `${html}/compare/${basehead}`,
    permalink_url: `${html}/compare/${repo.owner}:${base.slice(0, 7)}...${repo.owner}:${head.slice(0, 7)}`,
    diff_url: `${html}/compare/${basehead}.diff`,
    patch_url: `${html}/compare/${basehead}.patch`,
    base_commit: await commit(base),
    merge_base_commit: await commit(mergeBase),
    status:
      ahead === 0 && behind === 0
        ? 'identical'
        : ahead > 0 && behind > 0
          ? 'diverged'
          : ahead > 0
            ? 'ahead'
            : 'behind',
    ahead_by: ahead,
    behind_by: behind,
    total_commits: ahead,
    commits: await Promise.all(shas.map(commit)),
    files: [],
  };
}
