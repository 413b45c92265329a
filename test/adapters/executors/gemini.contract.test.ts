/**
 * The real Gemini CLI (@google/gemini-cli 0.61.0) through CliExecutor against the
 * scripted model server on 127.0.0.1 (Gemini's streamGenerateContent, SSE).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliExecutor } from '../../../src/adapters/executors/cli-executor.js';
import { explainWith, startModelServer } from '../../support/model-server/index.js';
import type { ModelServer, Step } from '../../support/model-server/index.js';
import { executorConfig, GEMINI_BIN, makeSandbox, turnRequest } from './helpers.js';
import type { Sandbox } from './helpers.js';

const USAGE = { input: 1000, cachedInput: 100, output: 20 };

let server: ModelServer | undefined;
let sandbox: Sandbox | undefined;

afterEach(async () => {
  await server?.close();
  sandbox?.cleanup();
  server = undefined;
  sandbox = undefined;
});

async function run(script: Step[], binary = GEMINI_BIN) {
  server = await startModelServer(script);
  sandbox = makeSandbox();
  const config = executorConfig('gemini', { model: 'gemini-2.5-pro' });
  const executor = new CliExecutor(config, {
    binary,
    baseUrl: server.url,
    // Any stray request would go to the server as a proxy CONNECT and be recorded.
    sourceEnv: {
      PATH: process.env.PATH,
      GITHUB_TOKEN: 'ghs_must_not_leak',
      HTTPS_PROXY: server.url,
      HTTP_PROXY: server.url,
      NO_PROXY: '127.0.0.1',
    },
  });
  const request = turnRequest(sandbox, config, {
    env: { GEMINI_API_KEY: 'gemini-test-key' },
    timeoutMs: 60_000,
  });
  const record = await executor.runTurn(request, new AbortController().signal);
  return { record, server, sandbox };
}

describe('gemini contract (real binary)', () => {
  it('runs a tool call in the worktree and reports the usage it measured', async () => {
    const { record, server, sandbox } = await run([
      { kind: 'tool', command: 'echo hello > hello.txt && env > env.txt', usage: USAGE },
      { kind: 'message', text: 'Created hello.txt.', usage: USAGE },
    ]);
    await explainWith(server, () => {
      expect({ outcome: record.outcome, detail: record.detail }).toEqual({
        outcome: 'ok',
        detail: '',
      });
      expect(readFileSync(join(sandbox.worktree, 'hello.txt'), 'utf8')).toBe('hello\n');
      expect(record.finalMessage).toBe('Created hello.txt.');
      // Summed over the two requests, as the server sent them; Gemini prices from the table.
      expect(record.usage).toHaveLength(1);
      expect(record.usage[0]).toMatchObject({
        executor: 'gemini',
        model: 'gemini-2.5-pro',
        tokens: { input: 2000, cachedInput: 200, cacheWrite: 0, output: 40 },
        measured: true,
      });
      const requests = server.modelRequests();
      expect(requests.map((r) => r.path)).toEqual([
        '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
        '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
      ]);
      expect(requests[0]?.headers['x-goog-api-key']).toBe('gemini-test-key');
      expect(server.strayRequests()).toEqual([]);
      const env = readFileSync(join(sandbox.worktree, 'env.txt'), 'utf8');
      expect(env).not.toMatch(/GITHUB_TOKEN|must_not_leak/);
    });
  }, 270_000);

  it.each([
    ['401', { kind: 'auth' }, 'auth', /API key not valid/],
    [
      '429 with a daily quota',
      { kind: 'usage-limit', resetsAt: new Date() },
      'usage-limit',
      /daily quota/,
    ],
    ['503', { kind: 'overload' }, 'outage', /overloaded/],
  ] as const)(
    'classifies a %s answer, asked once',
    async (_name, step, outcome, detail) => {
      const { record, server } = await run([step]);
      expect(record.outcome).toBe(outcome);
      expect(record.detail).toMatch(detail);
      expect(server.strayRequests()).toEqual([]);
      expect(server.modelRequests()).toHaveLength(1);
    },
    90_000,
  );

  it('says the CLI is missing when its binary is not installed', async () => {
    const { record, server } = await run(
      [{ kind: 'message', text: 'never', usage: USAGE }],
      join(GEMINI_BIN, '..', 'no-such-gemini'),
    );
    expect(record.missingBinary).toBe(true);
    expect(server.modelRequests()).toHaveLength(0);
  });
});
