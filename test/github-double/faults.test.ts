import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Octokit } from '@octokit/rest';
import { octokitFor } from './client.js';
import { startGitHubDouble, type GitHubDouble, type SeededUser } from './index.js';

let gh: GitHubDouble;
let alice: SeededUser;
let octokit: Octokit;
const owner = 'acme';
const repo = 'shop';

async function failure(
  p: Promise<unknown>,
): Promise<{ status: number; headers: Record<string, string | undefined> }> {
  try {
    await p;
    return { status: 0, headers: {} };
  } catch (e) {
    const err = e as { status: number; response?: { headers: Record<string, string | undefined> } };
    return { status: err.status, headers: err.response?.headers ?? {} };
  }
}

beforeAll(async () => {
  gh = await startGitHubDouble({ contentCreationPerMinute: 3 });
  alice = gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({ owner, name: repo });
  octokit = octokitFor(gh, alice.token);
});

afterEach(() => {
  gh.faults.clear();
});
afterAll(() => gh.close());

describe('faults, rate limits and stats', () => {
  it('injects a 502 for n requests of one route, then answers normally', async () => {
    gh.faults.add({ route: 'GET /repos/{owner}/{repo}', status: 502, times: 2 });
    expect((await failure(octokit.rest.repos.get({ owner, repo }))).status).toBe(502);
    expect((await failure(octokit.rest.repos.get({ owner, repo }))).status).toBe(502);
    expect((await octokit.rest.repos.get({ owner, repo })).status).toBe(200);
  });

  it('injects a secondary rate limit (403 + retry-after) and a 429, by operationId', async () => {
    gh.faults.add({
      route: 'issues/list-for-repo',
      status: 403,
      kind: 'secondary-rate-limit',
      retryAfterSeconds: 7,
    });
    const limited = await failure(octokit.rest.issues.listForRepo({ owner, repo }));
    expect([limited.status, limited.headers['retry-after']]).toEqual([403, '7']);
    gh.faults.add({ route: 'issues/list-for-repo', status: 429, kind: 'secondary-rate-limit' });
    expect((await failure(octokit.rest.issues.listForRepo({ owner, repo }))).status).toBe(429);
  });

  it('injects faults into GraphQL by operation name', async () => {
    gh.faults.add({ route: 'graphql:Viewer', status: 502 });
    const q = 'query Viewer { viewer { login } }';
    const failed = await octokit.graphql(q).catch((e: { status: number }) => e.status);
    expect(failed).toBe(502);
    expect(await octokit.graphql(q)).toEqual({ viewer: { login: 'alice' } });
    expect(gh.stats.graphql['Viewer']).toBe(2);
  });

  it('drops a connection and delays an answer', async () => {
    gh.faults.add({ route: 'GET /repos/{owner}/{repo}', drop: true });
    const dropped = await failure(octokit.rest.repos.get({ owner, repo }));
    expect(dropped.status).toBe(500); // Octokit reports a network failure as status 500
    gh.faults.add({ route: 'GET /repos/{owner}/{repo}', latencyMs: 50 });
    expect((await octokit.rest.repos.get({ owner, repo })).status).toBe(200);
  });

  it('sends x-ratelimit-* headers on every answer, counting per token', async () => {
    const a = await octokit.rest.repos.get({ owner, repo });
    const b = await octokit.rest.repos.get({ owner, repo });
    expect(a.headers['x-ratelimit-limit']).toBe('5000');
    expect(a.headers['x-ratelimit-resource']).toBe('core');
    expect(Number(b.headers['x-ratelimit-used'])).toBe(Number(a.headers['x-ratelimit-used']) + 1);
    expect(Number(b.headers['x-ratelimit-remaining'])).toBe(
      5000 - Number(b.headers['x-ratelimit-used']),
    );
  });

  it('enforces the content-creation cap when asked and counts content-creating writes', async () => {
    const before = gh.stats.contentCreating;
    for (let i = 0; i < 3; i++) await octokit.rest.issues.create({ owner, repo, title: `t${i}` });
    const capped = await failure(
      octokit.rest.issues.create({ owner, repo, title: 'one too many' }),
    );
    expect([capped.status, capped.headers['retry-after']]).toEqual([403, '60']);
    expect(gh.stats.contentCreating - before).toBe(4);
    expect(gh.stats.rest['issues/create']).toBeGreaterThanOrEqual(4);
    expect(gh.state.issues(owner, repo)).toHaveLength(3);
  });

  it('serves 200 sequential requests (how fast is measured in bench/github-double.ts)', async () => {
    for (let i = 0; i < 200; i++) {
      const r = await fetch(`${gh.url}/repos/${owner}/${repo}/issues/1`, {
        headers: { authorization: `token ${alice.token}` },
      });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    }
    expect(gh.stats.rest['issues/get']).toBe(200);
  });
});
