/**
 * An executor's `health` URL ends an outage early. The run finds the coder out for an
 * outage (left by an earlier run in `roster.json`); a loopback server this test starts on
 * 127.0.0.1 stands in for the model server's health endpoint.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { probeHealth } from '../../src/adapters/health/probe.js';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
let server: Server | undefined;
afterEach(async () => {
  repo?.cleanup();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
});

/** A health endpoint answering `status`; returns its URL and the requests it saw. */
async function healthServer(status: number): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  server = createServer((req, res) => {
    hits.push(`${req.method ?? ''} ${req.url ?? ''}`);
    res.writeHead(status).end('{}');
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/models`, hits };
}

const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

/** The coder `a`, out for an outage for the next 5 minutes as an earlier run left it. */
function outageLeftBehind(health: string): void {
  const a = scriptedCoder(repo, 'a', { '*': { '*': { write: { 'src/s.txt': 'done\n' } } } });
  repo.write(
    'epicflow.yml',
    configYaml({ executors: [{ id: 'a', command: a }], gates: ['true'] }).replace(
      'gates:',
      `    health: ${JSON.stringify(health)}\ngates:`,
    ),
  );
  repo.commit('config');
  const now = Date.now();
  mkdirSync(stateDir(repo), { recursive: true });
  writeFileSync(
    join(stateDir(repo), 'roster.json'),
    JSON.stringify({
      version: 1,
      exclusions: {
        a: {
          kind: 'outage',
          reason: 'service outage: 529 overloaded',
          since: new Date(now).toISOString(),
          until: new Date(now + 5 * 60_000).toISOString(),
        },
      },
      rateLimits: {},
      lastUsed: {},
    }),
  );
}

describe('health URL', () => {
  it('brings an executor out for an outage back as soon as its URL answers 2xx', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const health = await healthServer(200);
    outageLeftBehind(health.url);
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(health.hits).toEqual(['GET /v1/models']);
    expect(result.stdout).toContain(`a is back: its health check answered (${health.url})`);
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['a'] });
  });

  it('keeps the outage while the URL answers otherwise: the run halts until it ends', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const health = await healthServer(503);
    outageLeftBehind(health.url);
    const result = await run(repo, plan);
    expect(result.code).toBe(1);
    expect(health.hits).toEqual(['GET /v1/models']);
    expect(result.stdout).toMatch(/roster exhausted: a \(service outage: 529 overloaded; back at/);
    expect(prompts(repo, 'a')).toHaveLength(0);
  });
});

describe('probeHealth', () => {
  it('is healthy on 2xx only, and not when nothing listens', async () => {
    const ok = await healthServer(204);
    expect(await probeHealth(ok.url)).toBe(true);
    await new Promise<void>((done) => server?.close(() => done()));
    // The same port, closed now: the connection is refused.
    expect(await probeHealth(ok.url)).toBe(false);
    const down = await healthServer(500);
    expect(await probeHealth(down.url)).toBe(false);
  });
});
