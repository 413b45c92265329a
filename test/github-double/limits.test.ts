/**
 * GitHub's rate limits in the double: each limit refuses exactly when GitHub would, and
 * answers exactly as GitHub answers (status, headers, body), on a manual clock so that
 * windows and resets are exact.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { octokitFor } from './client.js';
import {
  startGitHubDouble,
  timeToFirstDispatch,
  type DoubleOptions,
  type GitHubDouble,
} from './index.js';

const owner = 'acme';
const repo = 'shop';
const START = Date.parse('2026-03-02T10:00:00.000Z');

let gh: GitHubDouble | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
});

async function start(options: DoubleOptions): Promise<GitHubDouble> {
  gh = await startGitHubDouble({ clock: { mode: 'manual', start: START }, ...options });
  await gh.seed.repo({
    owner,
    name: repo,
    files: { '.github/workflows/story.yml': 'on: workflow_dispatch\njobs: {}\n' },
  });
  return gh;
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

async function call(
  d: GitHubDouble,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: {
      authorization: `token ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

const createIssue = (d: GitHubDouble, token: string, title: string) =>
  call(d, token, 'POST', `/repos/${owner}/${repo}/issues`, { title });

const graphql = (d: GitHubDouble, token: string, query: string, variables = {}) =>
  call(d, token, 'POST', '/graphql', { query, variables });

const RATE_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-used',
  'x-ratelimit-reset',
  'x-ratelimit-resource',
];

/** GitHub's secondary-limit answer, for the request id it names. */
function expectSecondary(a: Answer, status = 403): void {
  const id = a.headers.get('x-github-request-id') ?? '';
  expect(id).toMatch(/^[0-9A-F]{4}:[0-9A-F]{6}:[0-9A-F]{5}:[0-9A-F]{7}:[0-9A-F]{8}$/);
  expect(a.status).toBe(status);
  expect(a.headers.get('retry-after')).toBe('60');
  for (const h of RATE_HEADERS) expect(a.headers.get(h)).toBeNull();
  expect(a.body).toEqual({
    documentation_url:
      'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
    message:
      'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
      'For more on scraping GitHub and how it may affect your rights, please review our Terms of ' +
      'Service (https://docs.github.com/en/site-policy/github-terms/github-terms-of-service) ' +
      `If you reach out to GitHub Support for help, please include the request ID ${id}.`,
  });
  // What @octokit/plugin-throttling keys on to call onSecondaryRateLimit.
  expect(String(a.body['message'])).toMatch(/\bsecondary rate\b/i);
}

describe('content creation (secondary): 80 a minute, 500 an hour', () => {
  it('refuses the 81st content-creating request within a minute, as GitHub does, then lets one through a minute later', async () => {
    const d = await start({ limits: { contentCreation: true } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    for (let i = 1; i <= 80; i++) {
      d.clock.advance(500); // 80 creations in 40 s
      expect((await createIssue(d, alice.token, `t${i}`)).status).toBe(201);
    }
    const refused = await createIssue(d, alice.token, 'one too many');
    expectSecondary(refused);
    expect(d.state.issues(owner, repo)).toHaveLength(80);
    // Reads are not content: still answered.
    expect((await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`)).status).toBe(200);
    expect(d.stats.limitHits).toEqual([
      {
        limit: 'content-creation-per-minute',
        at: START + 40_000,
        account: `user:${alice.id}`,
        token: alice.token,
        route: 'POST /repos/{owner}/{repo}/issues',
        requestId: refused.headers.get('x-github-request-id'),
      },
    ]);
    // The window slides: the first creation (at +0.5 s) leaves it 60 s later.
    d.clock.advance(20_000);
    expectSecondary(await createIssue(d, alice.token, 'still too soon'));
    d.clock.advance(500);
    expect((await createIssue(d, alice.token, 'room again')).status).toBe(201);
  });

  it('counts GraphQL mutations that create content with REST, per account', async () => {
    const d = await start({ limits: { contentCreation: { perMinute: 3, perHour: 100 } } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const bob = d.seed.user({ login: 'bob', permission: 'write' });
    const board = d.seed.project({ owner, number: 1 });
    const first = await createIssue(d, alice.token, 'a');
    await createIssue(d, alice.token, 'b');
    // One request adding two items counts once (GitHub counts requests).
    const add = `mutation Add($p: ID!, $c: ID!) {
      a: addProjectV2ItemById(input: { projectId: $p, contentId: $c }) { item { id } }
      b: addProjectV2ItemById(input: { projectId: $p, contentId: $c }) { item { id } }
    }`;
    const added = await graphql(d, alice.token, add, {
      p: board.id,
      c: (first.body as { node_id: string }).node_id,
    });
    expect(added.status).toBe(200);
    expect(d.stats.contentCreatingRequests).toBe(3);
    expect(d.stats.contentCreating).toBe(4); // two items made by one request
    expectSecondary(await createIssue(d, alice.token, 'c'));
    expectSecondary(
      await graphql(d, alice.token, add, { p: board.id, c: 'x' }), // GraphQL: 403 too
    );
    // A mutation that creates nothing and reads are not counted; another account is not limited.
    const viewer = await graphql(d, alice.token, 'query { viewer { login } }');
    expect(viewer.body).toEqual({ data: { viewer: { login: 'alice' } } });
    expect((await createIssue(d, bob.token, 'bob may')).status).toBe(201);
  });

  it('refuses the 501st within an hour even when the last minute is quiet', async () => {
    const d = await start({ limits: { contentCreation: true } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const issue = d.seed.issue({ owner, repo, title: 'talk' });
    const comment = () =>
      call(d, alice.token, 'POST', `/repos/${owner}/${repo}/issues/${issue.number}/comments`, {
        body: 'hi',
      });
    for (let i = 1; i <= 500; i++) {
      d.clock.advance(i % 50 === 1 ? 61_000 : 100); // 50 a minute
      expect((await comment()).status).toBe(201);
    }
    d.clock.advance(61_000);
    const refused = await comment();
    expectSecondary(refused);
    expect(d.stats.limitHits.map((h) => h.limit)).toEqual(['content-creation-per-hour']);
    // An hour after the first comment, one slot is free again.
    const firstAt = START + 61_000;
    d.clock.advance(firstAt + 3_600_000 - d.clock.now() + 1);
    expect((await comment()).status).toBe(201);
  });
});

describe('REST points a minute (secondary): 900; GET 1, POST/PATCH/PUT/DELETE 5', () => {
  it('refuses the request that would pass 900 points in a minute', async () => {
    const d = await start({ limits: { restPoints: true } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const issue = d.seed.issue({ owner, repo, title: 'x' });
    // 10 PATCHes (50 points) and 850 GETs: 900.
    for (let i = 0; i < 10; i++) {
      const a = await call(
        d,
        alice.token,
        'PATCH',
        `/repos/${owner}/${repo}/issues/${issue.number}`,
        {
          title: `x${i}`,
        },
      );
      expect(a.status).toBe(200);
    }
    for (let i = 0; i < 850; i++) {
      expect((await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`)).status).toBe(200);
    }
    expectSecondary(await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`));
    expect(d.stats.limitHits.map((h) => h.limit)).toEqual(['rest-points-per-minute']);
    d.clock.advance(60_000);
    expect((await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`)).status).toBe(200);
  });

  it('answers 429 instead when asked to (GitHub sends either)', async () => {
    const d = await start({ limits: { restPoints: { perMinute: 5 }, status: 429 } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    expect((await createIssue(d, alice.token, 'five points')).status).toBe(201);
    expectSecondary(await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`), 429);
  });
});

describe('primary REST limit: 5,000 an hour per user or installation, 1,000 per GITHUB_TOKEN', () => {
  it('counts in x-ratelimit-* headers, refuses past the limit as GitHub does, and resets at x-ratelimit-reset', async () => {
    const d = await start({ limits: { rest: { perHour: 3 } } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const reset = String(Math.ceil((START + 3_600_000) / 1000));
    for (let used = 1; used <= 3; used++) {
      const a = await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`);
      expect([a.status, ...RATE_HEADERS.map((h) => a.headers.get(h))]).toEqual([
        200,
        '3',
        String(3 - used),
        String(used),
        reset,
        'core',
      ]);
    }
    d.clock.advance(1000);
    const refused = await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`);
    const id = refused.headers.get('x-github-request-id');
    expect([refused.status, ...RATE_HEADERS.map((h) => refused.headers.get(h))]).toEqual([
      403,
      '3',
      '0',
      '3',
      reset,
      'core',
    ]);
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(refused.body).toEqual({
      message:
        `API rate limit exceeded for user ID ${alice.id}. If you reach out to GitHub Support ` +
        `for help, please include the request ID ${id} and timestamp 2026-03-02 10:00:01 UTC.`,
      documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
    });
    expect(d.stats.limitHits.map((h) => h.limit)).toEqual(['primary-rest']);
    // At the reset the window starts again.
    d.clock.advance(Number(reset) * 1000 - d.clock.now());
    const again = await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`);
    expect([again.status, again.headers.get('x-ratelimit-remaining')]).toEqual([200, '2']);
  });

  it("counts an installation's tokens together, and a GITHUB_TOKEN against its repository's 1,000", async () => {
    const d = await start({ limits: { rest: true } });
    d.seed.app({ id: 77, slug: 'epicflow' });
    const one = d.seed.installationToken({ owner });
    const two = d.seed.installationToken({ owner });
    const a = await call(d, one.token, 'GET', `/repos/${owner}/${repo}`);
    const b = await call(d, two.token, 'GET', `/repos/${owner}/${repo}`);
    expect([a.headers.get('x-ratelimit-limit'), a.headers.get('x-ratelimit-used')]).toEqual([
      '5000',
      '1',
    ]);
    expect(b.headers.get('x-ratelimit-used')).toBe('2');
    const actions = d.seed.actionsToken({ owner, repo });
    const c = await call(d, actions.token, 'GET', `/repos/${owner}/${repo}`);
    expect([c.headers.get('x-ratelimit-limit'), c.headers.get('x-ratelimit-used')]).toEqual([
      '1000',
      '1',
    ]);
    expect(d.stats.byToken[actions.token]).toMatchObject({ login: 'github-actions[bot]', rest: 1 });
  });

  it('names the installation when an installation is refused', async () => {
    const d = await start({ limits: { rest: { perHour: 1, actionsPerHour: 1 } } });
    d.seed.app({ id: 77, slug: 'epicflow' });
    const { token } = d.seed.installationToken({ owner });
    await call(d, token, 'GET', `/repos/${owner}/${repo}`);
    const refused = await call(d, token, 'GET', `/repos/${owner}/${repo}`);
    expect(String(refused.body['message'])).toMatch(
      /^API rate limit exceeded for installation ID \d+\. If you reach out/,
    );
    const actions = d.seed.actionsToken({ owner, repo });
    await call(d, actions.token, 'GET', `/repos/${owner}/${repo}`);
    const limited = await call(d, actions.token, 'GET', `/repos/${owner}/${repo}`);
    expect([limited.status, limited.headers.get('x-ratelimit-limit')]).toEqual([403, '1']);
  });

  it('a request a secondary limit refused is not counted against the primary one', async () => {
    const d = await start({
      limits: { rest: true, contentCreation: { perMinute: 1, perHour: 9 } },
    });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    expect((await createIssue(d, alice.token, 'a')).headers.get('x-ratelimit-used')).toBe('1');
    expectSecondary(await createIssue(d, alice.token, 'b'));
    const next = await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`);
    expect(next.headers.get('x-ratelimit-used')).toBe('2');
  });
});

/** A query whose cost GitHub's formula puts at 51 (its documentation's own example, on boards). */
const BOARDS = `query Boards {
  organization(login: "acme") {
    projectsV2(first: 100) {
      nodes {
        items(first: 50) {
          nodes { fieldValues(first: 60) { nodes { __typename } } }
        }
      }
    }
  }
  rateLimit { cost nodeCount limit used remaining resetAt }
}`;

describe('primary GraphQL limit: points by the cost formula, 5,000 an hour', () => {
  it('costs a query what the formula says and answers rateLimit truthfully', async () => {
    const d = await start({ limits: { graphql: true } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const cheap = await graphql(
      d,
      alice.token,
      'query { viewer { login } rateLimit { cost used } }',
    );
    expect(cheap.body).toEqual({
      data: { viewer: { login: 'alice' }, rateLimit: { cost: 1, used: 1 } },
    });
    const a = await graphql(d, alice.token, BOARDS);
    // 1 request for the boards, 100 for their items, 100 × 50 for the values: 5,101 → 51.
    expect((a.body['data'] as Record<string, unknown>)['rateLimit']).toEqual({
      cost: 51,
      nodeCount: 100 + 100 * 50 + 100 * 50 * 60,
      limit: 5000,
      used: 52,
      remaining: 4948,
      resetAt: '2026-03-02T11:00:00Z',
    });
    expect(RATE_HEADERS.map((h) => a.headers.get(h))).toEqual([
      '5000',
      '4948',
      '52',
      String((START + 3_600_000) / 1000),
      'graphql',
    ]);
    // `nodes(ids:)` has as many parents below it as ids asked for.
    const ids = await graphql(
      d,
      alice.token,
      `
        query Items($ids: [ID!]!) {
          nodes(ids: $ids) {
            ... on Issue {
              labels(first: 100) {
                nodes {
                  name
                }
              }
            }
          }
          rateLimit {
            cost
          }
        }
      `,
      { ids: Array.from({ length: 250 }, (_, i) => `I_${i}`) },
    );
    // 250 label connections: 2.5 → 3 (GitHub rounds to the nearest).
    expect((ids.body['data'] as Record<string, unknown>)['rateLimit']).toEqual({ cost: 3 });
    expect(d.stats.graphqlPoints).toBe(1 + 51 + 3);
    expect(d.stats.byToken[alice.token]).toMatchObject({ graphql: 3, graphqlPoints: 55 });
  });

  it('lets a query take the last points, then answers HTTP 200 with a RATE_LIMIT error as GitHub does', async () => {
    const d = await start({ limits: { graphql: { perHour: 10 } } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const big = await graphql(d, alice.token, BOARDS);
    expect([
      big.status,
      big.headers.get('x-ratelimit-used'),
      big.headers.get('x-ratelimit-remaining'),
    ]).toEqual([200, '51', '0']);
    const refused = await graphql(d, alice.token, 'query { viewer { login } }');
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({
      errors: [
        {
          type: 'RATE_LIMIT',
          code: 'graphql_rate_limit',
          message: `API rate limit already exceeded for user ID ${alice.id}.`,
        },
      ],
    });
    expect(RATE_HEADERS.map((h) => refused.headers.get(h))).toEqual([
      '10',
      '0',
      '51',
      String((START + 3_600_000) / 1000),
      'graphql',
    ]);
    expect(d.stats.limitHits.map((h) => [h.limit, h.route])).toEqual([
      ['primary-graphql', 'graphql anonymous'],
    ]);
    // REST has a limit of its own.
    expect((await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`)).status).toBe(200);
  });
});

describe('GraphQL points a minute (secondary): 2,000; a query 1, a mutation 5', () => {
  it('refuses with a 403 once the minute is spent', async () => {
    const d = await start({ limits: { graphqlPoints: { perMinute: 11 } } });
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const board = d.seed.project({ owner, number: 1 });
    const rename = `mutation { updateProjectV2Field(input: { fieldId: "${board.fields[1]?.id ?? ''}", name: "State" }) { projectV2Field { __typename } } }`;
    expect((await graphql(d, alice.token, rename)).status).toBe(200);
    expect((await graphql(d, alice.token, rename)).status).toBe(200);
    expect((await graphql(d, alice.token, 'query { viewer { login } }')).status).toBe(200);
    expectSecondary(await graphql(d, alice.token, 'query { viewer { login } }'));
    expect(d.stats.limitHits.map((h) => h.limit)).toEqual(['graphql-points-per-minute']);
  });
});

describe('limits off (the default)', () => {
  it('refuses nothing, and still counts in the headers and stats', async () => {
    const d = await start({});
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    for (let i = 0; i < 90; i++) await createIssue(d, alice.token, `t${i}`);
    const a = await call(d, alice.token, 'GET', `/repos/${owner}/${repo}`);
    expect([a.status, a.headers.get('x-ratelimit-used')]).toEqual([200, '91']);
    expect(d.stats.limitHits).toEqual([]);
    expect(d.stats.byToken[alice.token]).toMatchObject({ rest: 91, contentCreating: 90 });
  });
});

describe('stats the goals are measured by', () => {
  it('counts git over HTTP per token and times the first dispatch from the label', async () => {
    const d = await start({});
    const alice = d.seed.user({ login: 'alice', permission: 'write' });
    const basic = Buffer.from(`x-access-token:${alice.token}`).toString('base64');
    const refs = await fetch(`${d.url}/${owner}/${repo}.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${basic}` },
    });
    await refs.arrayBuffer();
    expect(refs.status).toBe(200);
    expect(d.stats.byToken[alice.token]).toMatchObject({ git: 1, rest: 0 });

    const epic = d.seed.issue({ owner, repo, title: 'Epic' });
    d.act.labelIssue('alice', { owner, repo, number: epic.number, label: 'epic' });
    const seen: number[] = [];
    d.onDispatch((x) => seen.push(x.runId));
    d.clock.advance(42_500);
    await octokitFor(d, alice.token).rest.actions.createWorkflowDispatch({
      owner,
      repo,
      workflow_id: 'story.yml',
      ref: 'main',
      inputs: { epic: String(epic.number) },
    });
    expect(seen).toHaveLength(1);
    expect(
      timeToFirstDispatch(d.stats, {
        owner,
        repo,
        issue: epic.number,
        label: 'epic',
        input: 'epic',
      }),
    ).toBe(42_500);
    expect(d.state.dispatches(owner, repo)[0]?.at).toBe(START + 42_500);
  });
});
