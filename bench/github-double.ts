/**
 * GitHub double benchmark: how fast the test double starts and answers, with every
 * contract check on (request and response validation, GraphQL validation). Printing
 * only: the unit tests assert nothing about speed.
 */
import { startGitHubDouble } from '../test/github-double/index.js';
import { median } from './support/stats.js';

const REQUESTS = 500;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function rate(n: number, one: (i: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await one(i);
  return (n * 1000) / (performance.now() - t0);
}

export async function run(): Promise<void> {
  const rows: [string, string][] = [];
  let gh!: Awaited<ReturnType<typeof startGitHubDouble>>;
  // The first start in a process also loads GitHub's OpenAPI description (13 MB of JSON).
  const cold = await timed(async () => {
    gh = await startGitHubDouble();
  });
  const starts: number[] = [];
  for (let i = 0; i < 5; i++) {
    starts.push(
      await timed(async () => {
        await gh.close();
        gh = await startGitHubDouble();
      }),
    );
  }
  rows.push(['first start in a process (loads the OpenAPI description)', `${cold.toFixed(0)} ms`]);
  rows.push(['close + start again (median of 5)', `${median(starts).toFixed(0)} ms`]);

  const alice = gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({ owner: 'acme', name: 'shop' });
  gh.seed.issue({ owner: 'acme', repo: 'shop', title: 'epic' });
  gh.seed.project({
    owner: 'acme',
    number: 1,
    fields: [{ name: 'Status', dataType: 'SINGLE_SELECT', options: ['Planned', 'Done'] }],
  });
  const headers = { authorization: `token ${alice.token}`, 'content-type': 'application/json' };
  const call = async (path: string, init: RequestInit = {}): Promise<void> => {
    const r = await fetch(`${gh.url}${path}`, { ...init, headers });
    await r.arrayBuffer();
    if (r.status >= 300) throw new Error(`${path}: ${r.status}`);
  };
  // Warm-up compiles each validator once, as the first call of a test would.
  await call('/repos/acme/shop/issues/1');
  await call('/repos/acme/shop/issues/1/comments', {
    method: 'POST',
    body: JSON.stringify({ body: 'x' }),
  });
  const get = await rate(REQUESTS, () => call('/repos/acme/shop/issues/1'));
  rows.push([`GET issue, ${REQUESTS} sequential`, `${get.toFixed(0)} req/s`]);
  const post = await rate(REQUESTS, (i) =>
    call('/repos/acme/shop/issues/1/comments', {
      method: 'POST',
      body: JSON.stringify({ body: `c${i}` }),
    }),
  );
  rows.push([`POST comment, ${REQUESTS} sequential`, `${post.toFixed(0)} req/s`]);
  const query = JSON.stringify({
    query:
      'query Board { organization(login: "acme") { projectV2(number: 1) { id fields(first: 20) { nodes { ... on ProjectV2FieldCommon { name } } } } } }',
  });
  const gql = await rate(REQUESTS, () => call('/graphql', { method: 'POST', body: query }));
  rows.push([`GraphQL board query, ${REQUESTS} sequential`, `${gql.toFixed(0)} req/s`]);
  const refs = await rate(100, () => call('/repos/acme/shop/git/ref/heads/main'));
  rows.push(['GET git ref (spawns git), 100 sequential', `${refs.toFixed(0)} req/s`]);
  gh.assertNoViolations();
  await gh.close();

  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`| ${'measure'.padEnd(width)} | value |`);
  console.log(`| ${'-'.repeat(width)} | ----- |`);
  for (const [k, v] of rows) console.log(`| ${k.padEnd(width)} | ${v} |`);
}
