import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Octokit } from '@octokit/rest';
import { octokitFor } from './client.js';
import { startGitHubDouble, type GitHubDouble } from './index.js';

let gh: GitHubDouble;
/** A workflow's `GITHUB_TOKEN`: how CI reports check runs. */
let ci: Octokit;
/** A person with write access: may post commit statuses, not check runs. */
let alice: Octokit;
const base = { owner: 'acme', repo: 'shop' };

const ROLLUP = `query Rollup($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      commits(last: 1) {
        nodes {
          commit {
            oid
            statusCheckRollup {
              state
              contexts(first: 100) {
                totalCount
                nodes {
                  __typename
                  ... on CheckRun { name status conclusion }
                  ... on StatusContext { context state }
                }
              }
            }
          }
        }
      }
    }
  }
}`;

interface RollupAnswer {
  repository: {
    pullRequest: {
      commits: {
        nodes: {
          commit: {
            oid: string;
            statusCheckRollup: {
              state: string;
              contexts: { totalCount: number; nodes: Record<string, unknown>[] };
            } | null;
          };
        }[];
      };
    };
  };
}

let pr: number;
let head: string;

beforeAll(async () => {
  gh = await startGitHubDouble();
  const a = gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({ owner: 'acme', name: 'shop' });
  alice = octokitFor(gh, a.token);
  await alice.rest.git.createRef({
    ...base,
    ref: 'refs/heads/feature',
    sha: (await gh.state.ref('acme', 'shop', 'main')) ?? '',
  });
  await gh.act.pushFiles('alice', {
    ...base,
    branch: 'feature',
    files: { 'a.txt': 'one\n' },
    message: 'one',
  });
  await gh.act.pushFiles('alice', {
    ...base,
    branch: 'feature',
    files: { 'b.txt': 'two\n' },
    message: 'two',
  });
  ci = octokitFor(gh, gh.seed.actionsToken(base).token);
  const { data } = await alice.rest.pulls.create({
    ...base,
    head: 'feature',
    base: 'main',
    title: 'Feature',
  });
  pr = data.number;
  head = data.head.sha;
});
afterAll(() => gh.close());

async function rollup(): Promise<RollupAnswer['repository']['pullRequest']['commits']['nodes']> {
  const answer = await alice.graphql<RollupAnswer>(ROLLUP, {
    owner: base.owner,
    name: base.repo,
    number: pr,
  });
  return answer.repository.pullRequest.commits.nodes;
}

describe('check runs and commit statuses', () => {
  it('a head commit without any has no rollup', async () => {
    const nodes = await rollup();
    expect(nodes).toEqual([{ commit: { oid: head, statusCheckRollup: null } }]);
  });

  it('CI creates, updates and completes a check run; a person may not create one, another App may not change it', async () => {
    const { data: created } = await ci.rest.checks.create({
      ...base,
      name: 'build',
      head_sha: head,
    });
    expect(created).toMatchObject({
      name: 'build',
      head_sha: head,
      status: 'queued',
      conclusion: null,
      completed_at: null,
      app: { slug: 'github-actions' },
    });
    const id = created.id;
    await ci.rest.checks.update({ ...base, check_run_id: id, status: 'in_progress' });
    const { data: done } = await ci.rest.checks.update({
      ...base,
      check_run_id: id,
      conclusion: 'failure',
      output: { title: 'Build failed', summary: '2 errors' },
    });
    expect(done).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(done.completed_at).toEqual(expect.any(String));
    const { data: read } = await ci.rest.checks.get({ ...base, check_run_id: id });
    expect(read.output).toMatchObject({ title: 'Build failed', summary: '2 errors' });

    await expect(
      alice.rest.checks.create({ ...base, name: 'build', head_sha: head }),
    ).rejects.toMatchObject({ status: 403, message: expect.stringContaining('GitHub App') });
    // Another App (an installation token) reports its own runs, but may not change CI's.
    gh.seed.app({ id: 77, slug: 'epicflow' });
    const app = octokitFor(gh, gh.seed.installationToken({ owner: 'acme' }).token);
    await expect(
      app.rest.checks.update({ ...base, check_run_id: id, conclusion: 'success' }),
    ).rejects.toMatchObject({ status: 403 });
    const { data: own } = await app.rest.checks.create({
      ...base,
      name: 'epicflow',
      head_sha: head,
      conclusion: 'neutral',
    });
    expect(own).toMatchObject({
      status: 'completed',
      conclusion: 'neutral',
      app: { slug: 'epicflow' },
    });
    await expect(
      ci.rest.checks.create({ ...base, name: 'lint', head_sha: 'f'.repeat(40) }),
    ).rejects.toMatchObject({ status: 422, message: expect.stringContaining('No commit found') });
    await expect(
      ci.rest.checks.create({ ...base, name: 'lint', head_sha: head, status: 'completed' }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('a person with write access posts commit statuses; the last one per context counts', async () => {
    const { data } = await alice.rest.repos.createCommitStatus({
      ...base,
      sha: head,
      state: 'pending',
      context: 'ci/deploy',
      description: 'deploying',
    });
    expect(data).toMatchObject({
      state: 'pending',
      context: 'ci/deploy',
      creator: { login: 'alice' },
    });
    await alice.rest.repos.createCommitStatus({
      ...base,
      sha: head,
      state: 'error',
      context: 'CI/Deploy',
    });
    await alice.rest.repos.createCommitStatus({ ...base, sha: head, state: 'success' });
    await expect(
      alice.rest.repos.createCommitStatus({ ...base, sha: 'f'.repeat(40), state: 'success' }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('GraphQL rolls them up on the pull request head: last run per name, last status per context, GitHub\u2019s combined state', async () => {
    await ci.rest.checks.create({ ...base, name: 'lint', head_sha: head, status: 'in_progress' });
    // A second run of `build` replaces the failed one.
    await ci.rest.checks.create({
      ...base,
      name: 'build',
      head_sha: head,
      status: 'completed',
      conclusion: 'success',
    });
    const [node] = await rollup();
    expect(node?.commit.statusCheckRollup).toEqual({
      state: 'ERROR',
      contexts: {
        totalCount: 5,
        nodes: [
          { __typename: 'CheckRun', name: 'build', status: 'COMPLETED', conclusion: 'SUCCESS' },
          { __typename: 'CheckRun', name: 'epicflow', status: 'COMPLETED', conclusion: 'NEUTRAL' },
          { __typename: 'CheckRun', name: 'lint', status: 'IN_PROGRESS', conclusion: null },
          { __typename: 'StatusContext', context: 'CI/Deploy', state: 'ERROR' },
          { __typename: 'StatusContext', context: 'default', state: 'SUCCESS' },
        ],
      },
    });
    await alice.rest.repos.createCommitStatus({
      ...base,
      sha: head,
      state: 'success',
      context: 'ci/deploy',
    });
    expect((await rollup())[0]?.commit.statusCheckRollup?.state).toBe('PENDING');
    // A new head commit starts without checks.
    await gh.act.pushFiles('alice', {
      ...base,
      branch: 'feature',
      files: { 'c.txt': '3\n' },
      message: 'three',
    });
    const [next] = await rollup();
    expect(next?.commit.oid).not.toBe(head);
    expect(next?.commit.statusCheckRollup).toBeNull();
  });
});
