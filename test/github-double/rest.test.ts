import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Octokit } from '@octokit/rest';
import { runChecks } from '../support/checks.js';
import { octokitFor } from './client.js';
import { startGitHubDouble, type GitHubDouble, type SeededUser } from './index.js';

const owner = 'acme';
const repo = 'shop';

let gh: GitHubDouble;
let alice: SeededUser;
let reader: SeededUser;
let octokit: Octokit;

/** The HTTP status of a failed Octokit call (Octokit throws on >= 400). */
async function statusOf(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
    return { status: 0, message: '' };
  } catch (e) {
    const err = e as { status: number; response?: { data?: { message?: string } } };
    return { status: err.status, message: err.response?.data?.message ?? '' };
  }
}

beforeAll(async () => {
  gh = await startGitHubDouble();
  alice = gh.seed.user({ login: 'alice', permission: 'write' });
  reader = gh.seed.user({ login: 'rita', permission: 'read' });
  await gh.seed.repo({
    owner,
    name: repo,
    files: { '.github/workflows/story.yml': 'on: workflow_dispatch\njobs: {}\n' },
  });
  octokit = octokitFor(gh, alice.token);
});

afterAll(() => gh.close());

describe('issues, labels and comments', () => {
  it('creates, reads, edits, labels and closes an issue', async () => {
    const created = await octokit.rest.issues.create({
      owner,
      repo,
      title: 'Epic: checkout',
      body: 'plan',
      labels: ['epic'],
    });
    expect(created.status).toBe(201);
    expect(created.data.user?.login).toBe('alice');
    const n = created.data.number;
    await octokit.rest.issues.update({
      owner,
      repo,
      issue_number: n,
      body: 'plan v2',
      labels: ['epic', 'wave-1'],
    });
    const got = await octokit.rest.issues.get({ owner, repo, issue_number: n });
    expect(got.data.body).toBe('plan v2');
    expect(got.data.labels.map((l) => (typeof l === 'string' ? l : l.name))).toEqual([
      'epic',
      'wave-1',
    ]);
    await octokit.rest.issues.update({ owner, repo, issue_number: n, state: 'closed' });
    expect(gh.state.issue(owner, repo, n)?.state).toBe('closed');
    const open = await octokit.rest.issues.listForRepo({ owner, repo, state: 'open' });
    expect(open.data.map((i) => i.number)).not.toContain(n);
  });

  it('pages comments with per_page/page and a Link header, and updates one in place', async () => {
    const { data: issue } = await octokit.rest.issues.create({ owner, repo, title: 'chatty' });
    for (let i = 1; i <= 5; i++) {
      await octokit.rest.issues.createComment({
        owner,
        repo,
        issue_number: issue.number,
        body: `c${i}`,
      });
    }
    const page1 = await octokit.rest.issues.listComments({
      owner,
      repo,
      issue_number: issue.number,
      per_page: 2,
    });
    expect(page1.data.map((c) => c.body)).toEqual(['c1', 'c2']);
    expect(page1.headers.link).toContain('rel="next"');
    expect(page1.headers.link).toContain('page=3');
    const all = await octokit.paginate(octokit.rest.issues.listComments, {
      owner,
      repo,
      issue_number: issue.number,
      per_page: 2,
    });
    expect(all.map((c) => c.body)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    const first = all[0];
    if (!first) throw new Error('no comment');
    await octokit.rest.issues.updateComment({ owner, repo, comment_id: first.id, body: 'edited' });
    expect(gh.state.comments(owner, repo, issue.number)[0]?.body).toBe('edited');
  });

  it('refuses writes from a read-only user the way GitHub does', async () => {
    const ro = octokitFor(gh, reader.token);
    const r = await statusOf(ro.rest.issues.create({ owner, repo, title: 'nope' }));
    expect(r.status).toBe(403);
    const anon = await statusOf(octokitFor(gh, 'ghp_wrong').rest.repos.get({ owner, repo }));
    expect(anon).toEqual({ status: 401, message: 'Bad credentials' });
  });

  it('reports collaborator permission (maintain → write, triage → read)', async () => {
    gh.seed.permission({ owner, repo, login: 'mia', permission: 'maintain' });
    const mia = await octokit.rest.repos.getCollaboratorPermissionLevel({
      owner,
      repo,
      username: 'mia',
    });
    expect([mia.data.permission, mia.data.role_name]).toEqual(['write', 'maintain']);
    const rita = await octokit.rest.repos.getCollaboratorPermissionLevel({
      owner,
      repo,
      username: 'rita',
    });
    expect(rita.data.permission).toBe('read');
  });
});

describe('sub-issues and dependencies', () => {
  it('links stories under an epic and records blocked-by edges', async () => {
    const epic = gh.seed.issue({ owner, repo, title: 'epic' });
    const a = gh.seed.issue({ owner, repo, title: 'story a' });
    const b = gh.seed.issue({ owner, repo, title: 'story b' });
    await octokit.rest.issues.addSubIssue({
      owner,
      repo,
      issue_number: epic.number,
      sub_issue_id: a.id,
    });
    await octokit.rest.issues.addSubIssue({
      owner,
      repo,
      issue_number: epic.number,
      sub_issue_id: b.id,
    });
    const subs = await octokit.rest.issues.listSubIssues({
      owner,
      repo,
      issue_number: epic.number,
    });
    expect(subs.data.map((i) => i.number)).toEqual([a.number, b.number]);
    const parent = await octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/parent', {
      owner,
      repo,
      issue_number: b.number,
    });
    expect(parent.data.number).toBe(epic.number);
    await octokit.request(
      'POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by',
      { owner, repo, issue_number: b.number, issue_id: a.id },
    );
    const blockers = await octokit.request(
      'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by',
      { owner, repo, issue_number: b.number },
    );
    expect(blockers.data.map((i: { number: number }) => i.number)).toEqual([a.number]);
    const got = await octokit.rest.issues.get({ owner, repo, issue_number: epic.number });
    expect(got.data.sub_issues_summary).toEqual({ total: 2, completed: 0, percent_completed: 0 });

    await octokit.rest.issues.removeSubIssue({
      owner,
      repo,
      issue_number: epic.number,
      sub_issue_id: b.id,
    });
    await octokit.request(
      'DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}',
      { owner, repo, issue_number: b.number, issue_id: a.id },
    );
    expect(gh.state.issue(owner, repo, epic.number)?.subIssueIds).toEqual([a.id]);
    expect(gh.state.issue(owner, repo, b.number)?.blockedByIds).toEqual([]);
    await gh.idle();
    expect(gh.deliveries.map((d) => `${d.event}.${d.action ?? ''}`)).toEqual(
      expect.arrayContaining([
        'sub_issues.sub_issue_added',
        'sub_issues.sub_issue_removed',
        'issue_dependencies.blocked_by_added',
        'issue_dependencies.blocked_by_removed',
      ]),
    );
  });
});

describe('git data, contents and merges', () => {
  it('writes trees and commits, lists folders and serves blobs, as the git data API does', async () => {
    const main = (await octokit.rest.git.getRef({ owner, repo, ref: 'heads/main' })).data.object
      .sha;
    const head = await octokit.rest.git.getCommit({ owner, repo, commit_sha: main });
    const tree = await octokit.rest.git.createTree({
      owner,
      repo,
      base_tree: head.data.tree.sha,
      tree: [{ path: 'docs/notes/a.md', mode: '100644', type: 'blob', content: '# A\n' }],
    });
    expect(tree.status).toBe(201);
    expect(tree.data.tree.map((e) => e.path)).toContain('docs/notes/a.md');
    const commit = await octokit.rest.git.createCommit({
      owner,
      repo,
      message: 'Add notes',
      tree: tree.data.sha,
      parents: [main],
    });
    expect(commit.status).toBe(201);
    expect(commit.data.parents.map((p) => p.sha)).toEqual([main]);
    // No ref moved: the commit is reachable only once a ref points at it.
    expect(await gh.state.ref(owner, repo, 'main')).toBe(main);
    await octokit.rest.git.createRef({
      owner,
      repo,
      ref: 'refs/heads/notes',
      sha: commit.data.sha,
    });
    const folder = await octokit.rest.repos.getContent({ owner, repo, path: 'docs', ref: 'notes' });
    expect(Array.isArray(folder.data)).toBe(true);
    const entries = folder.data as { name: string; type: string; sha: string }[];
    expect(entries.map((e) => [e.name, e.type])).toEqual([['notes', 'dir']]);
    const notes = await octokit.rest.repos.getContent({
      owner,
      repo,
      path: 'docs/notes',
      ref: 'notes',
    });
    const file = (notes.data as { name: string; sha: string }[])[0];
    expect(file?.name).toBe('a.md');
    const blob = await octokit.rest.git.getBlob({ owner, repo, file_sha: file?.sha ?? '' });
    expect(Buffer.from(blob.data.content, 'base64').toString('utf8')).toBe('# A\n');
    const bad = await statusOf(
      octokit.rest.git.createCommit({ owner, repo, message: 'x', tree: main, parents: [] }),
    );
    expect(bad).toEqual({ status: 422, message: 'Tree SHA does not exist' });
    const none = await statusOf(
      octokit.rest.git.getBlob({ owner, repo, file_sha: '0'.repeat(40) }),
    );
    expect(none.status).toBe(404);
  });

  it('creates and force-updates refs that live in the bare repository', async () => {
    const main = await octokit.rest.git.getRef({ owner, repo, ref: 'heads/main' });
    const sha = main.data.object.sha;
    expect(await gh.state.ref(owner, repo, 'main')).toBe(sha);
    await octokit.rest.git.createRef({ owner, repo, ref: 'refs/heads/epic/7', sha });
    const dup = await statusOf(
      octokit.rest.git.createRef({ owner, repo, ref: 'refs/heads/epic/7', sha }),
    );
    expect(dup).toEqual({ status: 422, message: 'Reference already exists' });
    const matching = await octokit.rest.git.listMatchingRefs({ owner, repo, ref: 'heads/epic/' });
    expect(matching.data.map((r) => r.ref)).toContain('refs/heads/epic/7');
    const updated = await octokit.rest.git.updateRef({
      owner,
      repo,
      ref: 'heads/epic/7',
      sha,
      force: true,
    });
    expect(updated.data.object.sha).toBe(sha);
  });

  it('writes files with sha compare-and-swap: a stale sha is a 409 conflict', async () => {
    const content = (s: string): string => Buffer.from(s).toString('base64');
    const created = await octokit.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: 'state/epic-1.json',
      message: 'state',
      content: content('{"v":1}'),
    });
    expect(created.status).toBe(201);
    const firstSha = created.data.content?.sha ?? '';
    const second = await octokit.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: 'state/epic-1.json',
      message: 'state',
      content: content('{"v":2}'),
      sha: firstSha,
    });
    expect(second.status).toBe(200);
    const stale = await statusOf(
      octokit.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        path: 'state/epic-1.json',
        message: 'state',
        content: content('{"v":3}'),
        sha: firstSha,
      }),
    );
    expect(stale.status).toBe(409);
    const missing = await statusOf(
      octokit.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        path: 'state/epic-1.json',
        message: 'state',
        content: content('{"v":3}'),
      }),
    );
    expect(missing.status).toBe(422);
    expect(await gh.state.file(owner, repo, 'main', 'state/epic-1.json')).toBe('{"v":2}');
    const read = await octokit.rest.repos.getContent({ owner, repo, path: 'state/epic-1.json' });
    expect('content' in read.data && Buffer.from(read.data.content, 'base64').toString()).toBe(
      '{"v":2}',
    );
  });

  it('merges server-side: 201 with a merge commit, 204 when already merged, 409 on conflict', async () => {
    const base = await octokit.rest.git.getRef({ owner, repo, ref: 'heads/main' });
    await octokit.rest.git.createRef({
      owner,
      repo,
      ref: 'refs/heads/story/a',
      sha: base.data.object.sha,
    });
    await octokit.rest.git.createRef({
      owner,
      repo,
      ref: 'refs/heads/story/b',
      sha: base.data.object.sha,
    });
    const write = (branch: string, text: string) =>
      octokit.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        branch,
        path: 'conflict.txt',
        message: text,
        content: Buffer.from(text).toString('base64'),
      });
    await write('story/a', 'a\n');
    await write('story/b', 'b\n');
    const merged = await octokit.rest.repos.merge({ owner, repo, base: 'main', head: 'story/a' });
    expect(merged.status).toBe(201);
    expect(merged.data.parents).toHaveLength(2);
    expect(await gh.state.file(owner, repo, 'main', 'conflict.txt')).toBe('a\n');
    const again = await octokit.rest.repos.merge({ owner, repo, base: 'main', head: 'story/a' });
    expect(again.status).toBe(204);
    const conflict = await statusOf(
      octokit.rest.repos.merge({ owner, repo, base: 'main', head: 'story/b' }),
    );
    expect(conflict).toEqual({ status: 409, message: 'Merge conflict' });
  });
});

describe('actions', () => {
  it('answers a dispatch with return_run_details with the run id and URLs, and lists the run', async () => {
    const res = await octokit.request(
      'POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches',
      {
        owner,
        repo,
        workflow_id: 'story.yml',
        ref: 'main',
        inputs: { epic: '1', story: 'a', attempt: '1' },
        return_run_details: true,
      },
    );
    expect(res.status).toBe(200);
    const details = res.data as { workflow_run_id: number; run_url: string; html_url: string };
    expect(details.run_url).toBe(
      `${gh.url}/repos/${owner}/${repo}/actions/runs/${details.workflow_run_id}`,
    );
    expect(gh.state.dispatches(owner, repo).at(-1)?.inputs).toEqual({
      epic: '1',
      story: 'a',
      attempt: '1',
    });
    const plain = await octokit.rest.actions.createWorkflowDispatch({
      owner,
      repo,
      workflow_id: 'story.yml',
      ref: 'main',
    });
    expect(plain.status).toBe(204);
    gh.act.completeWorkflowRun(details.workflow_run_id, 'failure');
    const run = await octokit.rest.actions.getWorkflowRun({
      owner,
      repo,
      run_id: details.workflow_run_id,
    });
    expect([run.data.status, run.data.conclusion]).toEqual(['completed', 'failure']);
    const jobs = await octokit.rest.actions.listJobsForWorkflowRun({
      owner,
      repo,
      run_id: details.workflow_run_id,
    });
    expect(jobs.data.jobs.map((j) => j.conclusion)).toEqual(['failure']);
    const runs = await octokit.rest.actions.listWorkflowRunsForRepo({
      owner,
      repo,
      event: 'workflow_dispatch',
    });
    expect(runs.data.total_count).toBe(2);
    const unknown = await statusOf(
      octokit.rest.actions.createWorkflowDispatch({
        owner,
        repo,
        workflow_id: 'nope.yml',
        ref: 'main',
      }),
    );
    expect(unknown.status).toBe(404);
  });
});

describe('pull requests', () => {
  it('opens a draft pull request and marks it ready with the GraphQL mutation', async () => {
    const main = await octokit.rest.git.getRef({ owner, repo, ref: 'heads/main' });
    await octokit.rest.git.createRef({
      owner,
      repo,
      ref: 'refs/heads/epic/9',
      sha: main.data.object.sha,
    });
    await octokit.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      branch: 'epic/9',
      path: 'epic9.txt',
      message: 'x',
      content: Buffer.from('x').toString('base64'),
    });
    const pr = await octokit.rest.pulls.create({
      owner,
      repo,
      base: 'main',
      head: 'epic/9',
      title: 'Epic #9: x',
      draft: true,
    });
    expect(pr.data.draft).toBe(true);
    const listed = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:epic/9` });
    expect(listed.data.map((p) => p.number)).toEqual([pr.data.number]);
    await octokit.graphql(
      `mutation Ready($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`,
      { id: pr.data.node_id },
    );
    const got = await octokit.rest.pulls.get({ owner, repo, pull_number: pr.data.number });
    expect(got.data.draft).toBe(false);
  });
});

describe('contract checks', () => {
  it('catches an unknown path with a 404 naming it', async () => {
    const r = await statusOf(
      octokit.request('GET /repos/{owner}/{repo}/no-such-thing', { owner, repo }),
    );
    expect(r.status).toBe(404);
    expect(gh.violations.map((v) => v.message)).toEqual([
      `no path in GitHub's OpenAPI description matches /repos/${owner}/${repo}/no-such-thing`,
    ]);
    // What runs after every test on its own (test/support/after-each.ts).
    expect(() => runChecks()).toThrow(/GitHub double .*GitHub contract violations/);
    expect(gh.violations).toEqual([]);
  });

  it('catches an operation of GitHub the double does not implement yet', async () => {
    const r = await statusOf(octokit.rest.repos.listReleases({ owner, repo }));
    expect(r.status).toBe(404);
    expect(gh.violations.map((v) => `${v.operation}: ${v.message}`)).toEqual([
      "repos/list-releases: GET /repos/{owner}/{repo}/releases is in GitHub's description but not implemented by the double",
    ]);
    gh.takeViolations();
  });

  it('catches a body missing a required field, naming the operation and the field', async () => {
    const r = await statusOf(
      octokit.request('POST /repos/{owner}/{repo}/issues', {
        owner,
        repo,
        body: 'no title',
      } as never),
    );
    expect(r.status).toBe(422);
    expect(r.message).toBe(
      'Invalid request to issues/create (POST /repos/{owner}/{repo}/issues): request body: /title is required',
    );
    expect(gh.violations).toHaveLength(1);
    gh.takeViolations();
  });

  it('catches a field of the wrong type', async () => {
    const r = await statusOf(
      octokit.request('POST /repos/{owner}/{repo}/git/refs', {
        owner,
        repo,
        ref: 'refs/heads/x',
        sha: 42,
      } as never),
    );
    expect(r.status).toBe(422);
    expect(r.message).toContain('git/create-ref');
    expect(r.message).toContain('/sha must be string');
    gh.takeViolations();
  });

  it('checks a field named like the prose its copy of the description leaves out (a check run’s output.summary)', async () => {
    const r = await statusOf(
      octokit.request('POST /repos/{owner}/{repo}/check-runs', {
        owner,
        repo,
        name: 'gates',
        head_sha: 'a'.repeat(40),
        output: { title: 'gates', summary: 42 },
      } as never),
    );
    expect(r.status).toBe(422);
    expect(r.message).toContain('checks/create');
    expect(r.message).toContain('/output/summary must be string');
    gh.takeViolations();
  });
});
