import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { verify } from '@octokit/webhooks-methods';
import { createSign, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeMiddleware, Probot, ProbotOctokit } from 'probot';
import { startGitHubDouble, type GitHubDouble } from './index.js';

const SECRET = 'webhook-secret-for-tests';

let gh: GitHubDouble;
let pem: string;

/** An app JWT as @octokit/auth-app makes it: RS256, iss = app id, short-lived. */
function appJwt(appId: number, key: string): string {
  const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = `${enc({ alg: 'RS256', typ: 'JWT' })}.${enc({ iat: now - 60, exp: now + 540, iss: appId })}`;
  return `${head}.${createSign('RSA-SHA256').update(head).sign(key, 'base64url')}`;
}
let server: Server;
let received: { event: string; delivery: string }[];

beforeAll(async () => {
  gh = await startGitHubDouble();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const app = gh.seed.app({ id: 777, slug: 'epicflow', privateKey: pem });
  gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({ owner: 'acme', name: 'shop' });
  gh.seed.issue({ owner: 'acme', repo: 'shop', title: 'Epic: checkout' });
  expect(app.botLogin).toBe('epicflow[bot]');

  received = [];
  const probot = new Probot({
    appId: 777,
    privateKey: pem,
    secret: SECRET,
    baseUrl: gh.url,
    logLevel: 'fatal',
    // Function form of defaults: retries and throttling off, as in probot's testing docs.
    Octokit: ProbotOctokit.defaults((o: object) => ({
      ...o,
      retry: { enabled: false },
      throttle: { enabled: false },
    })),
  });
  const middleware = await createNodeMiddleware(
    (bot) => {
      bot.onAny(async (context) => {
        received.push({ event: context.name, delivery: context.id });
      });
      bot.on('issues.labeled', async (context) => {
        if (context.isBot) return;
        await context.octokit.rest.issues.createComment(
          context.issue({ body: `epic started by ${context.payload.sender.login}` }),
        );
      });
    },
    { probot },
  );
  server = createServer((req, res) => {
    void middleware(req, res, () => {
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  gh.setWebhookTarget({ url: `http://127.0.0.1:${port}/api/github/webhooks`, secret: SECRET });
});

afterAll(async () => {
  await gh.close();
  await new Promise((resolve) => server.close(resolve));
});

describe('app authentication', () => {
  it('accepts the app JWT on app endpoints and rejects a JWT signed by another key', async () => {
    const jwt = appJwt(777, pem);
    const app = await fetch(`${gh.url}/app`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(((await app.json()) as { slug: string }).slug).toBe('epicflow');
    const inst = await fetch(`${gh.url}/repos/acme/shop/installation`, {
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(inst.status).toBe(200);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const forged = await fetch(`${gh.url}/app`, {
      headers: { authorization: `Bearer ${appJwt(777, other)}` },
    });
    expect(forged.status).toBe(401);
    const onRepo = await fetch(`${gh.url}/repos/acme/shop`, {
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(onRepo.status).toBe(401);
  });
});

describe('webhooks', () => {
  it('delivers a signed issues.labeled to a real probot app, which calls back with an installation token', async () => {
    gh.act.labelIssue('alice', { owner: 'acme', repo: 'shop', number: 1, label: 'epic' });
    await gh.idle();
    const delivery = gh.deliveries.find((d) => d.event === 'issues' && d.action === 'labeled');
    expect(delivery?.status).toBe(200);
    const comments = gh.state.comments('acme', 'shop', 1);
    expect(comments.map((c) => [c.author, c.body])).toEqual([
      ['epicflow[bot]', 'epic started by alice'],
    ]);
    await gh.idle();
    // The bot's own comment comes back as issue_comment.created, as on GitHub.
    expect(received.map((r) => r.event)).toEqual(['issues', 'issue_comment']);
    expect(gh.stats.rest['apps/create-installation-access-token']).toBe(1);
  });

  it('signs with X-Hub-Signature-256 that the official verifier accepts', async () => {
    const d = gh.act.comment('alice', { owner: 'acme', repo: 'shop', number: 1, body: '/status' });
    expect(d['body']).toBe('/status');
    await gh.idle();
    const delivery = gh.deliveries.at(-1);
    if (!delivery) throw new Error('no delivery');
    expect(delivery.event).toBe('issue_comment');
    expect(await verify(SECRET, delivery.body, delivery.signature256)).toBe(true);
    expect(await verify('another-secret', delivery.body, delivery.signature256)).toBe(false);
  });

  it('redelivers with the same delivery id', async () => {
    const before = received.length;
    // The `/status` comment: its redelivery triggers nothing else in this app.
    const first = gh.deliveries.find(
      (d) =>
        d.event === 'issue_comment' &&
        (d.payload['comment'] as { body: string }).body === '/status',
    );
    if (!first) throw new Error('no delivery');
    const again = await gh.redeliver(first.id);
    expect(again.attempts).toBe(2);
    expect(received.slice(before).map((r) => r.delivery)).toEqual([first.id]);
  });

  it('sends workflow_run.completed and sub_issues events validated against the official schemas', async () => {
    await gh.seed.repo({
      owner: 'acme',
      name: 'ci',
      files: { '.github/workflows/story.yml': 'on: workflow_dispatch\n' },
    });
    const story = gh.seed.issue({ owner: 'acme', repo: 'shop', title: 'story' });
    const alice = gh.seed.user({ login: 'alice' });
    const headers = { authorization: `token ${alice.token}`, 'content-type': 'application/json' };
    const dispatch = await fetch(`${gh.url}/repos/acme/ci/actions/workflows/story.yml/dispatches`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ref: 'main', return_run_details: true }),
    });
    const { workflow_run_id: runId } = (await dispatch.json()) as { workflow_run_id: number };
    gh.act.completeWorkflowRun(runId, 'success');
    const sub = await fetch(`${gh.url}/repos/acme/shop/issues/1/sub_issues`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sub_issue_id: story.id }),
    });
    expect(sub.status).toBe(201);
    await gh.idle();
    const names = gh.deliveries.map((d) => `${d.event}.${d.action}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'workflow_run.requested',
        'workflow_run.completed',
        'sub_issues.sub_issue_added',
      ]),
    );
    expect(received.map((r) => r.event)).toEqual(
      expect.arrayContaining(['workflow_run', 'sub_issues']),
    );
  });

  it('describes where a run came from as GitHub does: a dispatch, a push, a fork’s pull request', async () => {
    await gh.seed.repo({
      owner: 'acme',
      name: 'app',
      files: { '.github/workflows/story.yml': 'on: workflow_dispatch\n' },
    });
    const mallory = gh.seed.user({ login: 'mallory', permission: 'read' });
    await gh.seed.repo({ owner: 'mallory', name: 'app', forkOf: { owner: 'acme', repo: 'app' } });
    const alice = gh.seed.user({ login: 'alice' });
    const dispatch = await fetch(
      `${gh.url}/repos/acme/app/actions/workflows/story.yml/dispatches`,
      {
        method: 'POST',
        headers: { authorization: `token ${alice.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ref: 'main', return_run_details: true }),
      },
    );
    const { workflow_run_id: dispatched } = (await dispatch.json()) as { workflow_run_id: number };
    const title = 'epicflow epic 1 story api attempt 1';
    const fromFork = await gh.act.triggerWorkflowRun(mallory.login, {
      owner: 'acme',
      repo: 'app',
      workflowPath: '.github/workflows/story.yml',
      event: 'pull_request',
      headBranch: 'main',
      headRepository: { owner: 'mallory', repo: 'app' },
      displayTitle: title,
    });
    const pushed = await gh.act.triggerWorkflowRun(alice.login, {
      owner: 'acme',
      repo: 'app',
      workflowPath: '.github/workflows/story.yml',
      event: 'push',
      headBranch: 'main',
      displayTitle: title,
    });
    for (const id of [dispatched, fromFork, pushed]) gh.act.completeWorkflowRun(id, 'success');
    await gh.idle();
    const origin = (id: number) => {
      const d = gh.deliveries.find(
        (x) =>
          x.event === 'workflow_run' &&
          x.action === 'completed' &&
          (x.payload['workflow_run'] as { id: number }).id === id,
      );
      const run = d?.payload['workflow_run'] as {
        event: string;
        head_branch: string;
        path: string;
        display_title: string;
        repository: { full_name: string; fork: boolean };
        head_repository: { full_name: string; fork: boolean };
      };
      return [
        run.event,
        run.head_branch,
        run.path,
        run.repository.full_name,
        run.head_repository.full_name,
        run.head_repository.fork,
      ];
    };
    expect(origin(dispatched)).toEqual([
      'workflow_dispatch',
      'main',
      '.github/workflows/story.yml',
      'acme/app',
      'acme/app',
      false,
    ]);
    expect(origin(fromFork)).toEqual([
      'pull_request',
      'main',
      '.github/workflows/story.yml',
      'acme/app',
      'mallory/app',
      true,
    ]);
    expect(origin(pushed)).toEqual([
      'push',
      'main',
      '.github/workflows/story.yml',
      'acme/app',
      'acme/app',
      false,
    ]);
    // The API answers the same about a run as the webhook.
    const api = await fetch(`${gh.url}/repos/acme/app/actions/runs/${fromFork}`, {
      headers: { authorization: `token ${alice.token}` },
    });
    const body = (await api.json()) as { event: string; head_repository: { full_name: string } };
    expect([body.event, body.head_repository.full_name]).toEqual(['pull_request', 'mallory/app']);
  });
});
