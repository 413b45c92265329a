/**
 * The real codex binary (@openai/codex 0.171.0) through CliExecutor against
 * the scripted model server on 127.0.0.1.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliExecutor } from '../../../src/adapters/executors/cli-executor.js';
import { explainWith, startModelServer } from '../../support/model-server/index.js';
import { AGENT_CLIS_INSTALL_MS, agentCliBin } from '../../support/agent-clis.js';
import type { ModelServer, Step } from '../../support/model-server/index.js';
import { executorConfig, isAlive, makeSandbox, readPid, turnRequest } from './helpers.js';
import type { Sandbox } from './helpers.js';

const USAGE = { input: 1000, cachedInput: 100, output: 20 };
// The CLI's own retries off, so error cases end in about a second.
const NO_RETRIES = [
  '-c',
  'model_providers.epicflow.request_max_retries=0',
  '-c',
  'model_providers.epicflow.stream_max_retries=0',
];

let server: ModelServer | undefined;
let sandbox: Sandbox | undefined;

afterEach(async () => {
  await server?.close();
  sandbox?.cleanup();
  server = undefined;
  sandbox = undefined;
});

/** The pinned CLI (test/agent-clis), installed into the tests' cache folder on first use. */
let codexBin = '';
beforeAll(async () => {
  codexBin = await agentCliBin('codex');
}, AGENT_CLIS_INSTALL_MS);

/** `cancelAt`: the turn's AbortSignal fires once the server answers a step of this kind. */
async function run(script: Step[], timeoutMs = 60_000, cancelAt?: Step['kind']) {
  server = await startModelServer(script);
  sandbox = makeSandbox();
  const config = executorConfig('codex', { model: 'gpt-5.6', args: NO_RETRIES });
  const executor = new CliExecutor(config, {
    binary: codexBin,
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
    env: { OPENAI_API_KEY: 'sk-test-key', GH_TOKEN: 'gho_must_not_leak' },
    timeoutMs,
  });
  const cancel = new AbortController();
  if (cancelAt !== undefined) void server.reached(cancelAt).then(() => cancel.abort());
  const record = await executor.runTurn(request, cancel.signal);
  return { record, server, sandbox };
}

describe('codex contract (real binary)', () => {
  it('stops a turn that makes the same tool call again and again, as stalled', async () => {
    // The model asks for the same command five times; its sixth answer never comes, so a
    // sixth call cannot race the stop (codex may send that request before it is ended).
    const again = { kind: 'tool', command: 'echo again >> again.txt', usage: USAGE } as const;
    const { record, server, sandbox } = await run([
      again,
      again,
      again,
      again,
      again,
      { kind: 'hang' },
    ]);
    await explainWith(server, () => {
      expect(record.outcome).toBe('failed');
      expect(record.stalled?.signal).toBe('repeat');
      expect(record.detail).toMatch(
        /^stalled: the same tool call 5 times in a row: command_execution .*echo again >> again\.txt/,
      );
      // Stopped at the fifth call: it ran at most five times, and no request came after.
      const runs = readFileSync(join(sandbox.worktree, 'again.txt'), 'utf8').trim().split('\n');
      expect(runs.length).toBeLessThanOrEqual(5);
      expect(server.modelRequests().length).toBeLessThanOrEqual(6);
      // codex reports usage when its turn completes, which it never did: the tokens are estimated.
      expect(record.usage).toHaveLength(1);
      expect(record.usage[0]).toMatchObject({ executor: 'codex', measured: false });
    });
  });

  it('runs a tool call in the worktree and reports the usage the server sent', async () => {
    const { record, server, sandbox } = await run([
      { kind: 'tool', command: 'echo hello > hello.txt && env > env.txt', usage: USAGE },
      {
        kind: 'message',
        text: 'Created hello.txt.\nBLOCKED_ON: src/api.ts of story api',
        usage: USAGE,
      },
    ]);
    await explainWith(server, () => {
      expect({ outcome: record.outcome, detail: record.detail }).toEqual({
        outcome: 'ok',
        detail: '',
      });
      expect(readFileSync(join(sandbox.worktree, 'hello.txt'), 'utf8')).toBe('hello\n');
      expect(record.finalMessage).toBe('Created hello.txt.\nBLOCKED_ON: src/api.ts of story api');
      expect(record.blockedOn).toBe('src/api.ts of story api');
      // codex sums usage over the requests of a turn: two requests of 1,100 input (100 cached).
      expect(record.usage).toEqual([
        {
          executor: 'codex',
          model: 'gpt-5.6',
          tokens: { input: 2000, cachedInput: 200, cacheWrite: 0, output: 40 },
          measured: true,
          costUsd: (2000 * 5 + 200 * 0.5 + 40 * 30) / 1e6,
          costSource: 'price-table',
        },
      ]);
      const requests = server.modelRequests();
      expect(requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
      expect(requests[0]?.headers.authorization).toBe('Bearer sk-test-key');
      expect((requests[0]?.body as { model?: string }).model).toBe('gpt-5.6');
      const tools = ((requests[0]?.body as { tools?: { name?: string }[] }).tools ?? []).map(
        (t) => t.name,
      );
      expect(tools).toContain('exec_command');
      // Nothing left 127.0.0.1: no proxy CONNECT, no absolute-URL request.
      expect(server.strayRequests()).toEqual([]);
      const env = readFileSync(join(sandbox.worktree, 'env.txt'), 'utf8');
      expect(env).not.toMatch(/GITHUB_TOKEN|GH_TOKEN|must_not_leak/);
      expect(env).toContain(`CODEX_HOME=${sandbox.home}`);
    });
  });

  it('reads a usage limit with its reset time', async () => {
    const resetsAt = new Date(Date.now() + 3 * 3600_000);
    const { record, server } = await run([{ kind: 'usage-limit', resetsAt }]);
    expect(record.outcome).toBe('usage-limit');
    expect(record.detail).toMatch(/hit your usage limit/);
    // codex shows the reset to the minute ("try again at 11:46 AM").
    expect(Math.abs(Date.parse(record.resetAt ?? '') - resetsAt.getTime())).toBeLessThan(60_000);
    expect(record.usage).toEqual([]);
    expect(server.modelRequests()).toHaveLength(1);
  });

  it.each([
    ['rate-limit', { kind: 'rate-limit', retryAfterSeconds: 1 }, 'rate-limited', /429/],
    ['overload', { kind: 'overload' }, 'outage', /503/],
    ['auth', { kind: 'auth' }, 'auth', /401/],
  ] as const)('classifies a %s answer', async (_name, step, outcome, detail) => {
    const { record, server } = await run([step]);
    expect(record.outcome).toBe(outcome);
    expect(record.detail).toMatch(detail);
    expect(server.strayRequests()).toEqual([]);
    expect(record.exitCode).toBe(1);
  });

  it('ends a hung codex and the processes it started when its turn is cancelled', async () => {
    const { record, sandbox } = await run(
      [
        {
          kind: 'tool',
          command:
            'sleep 300 >/dev/null 2>&1 & echo $! > child.pid; echo $PPID > parent.pid; echo started',
          usage: USAGE,
        },
        { kind: 'hang' },
      ],
      // Cancelled once the CLI waits on the hanging answer: the tool call ran before it.
      60_000,
      'hang',
    );
    expect({ outcome: record.outcome, detail: record.detail, timedOut: record.timedOut }).toEqual({
      outcome: 'failed',
      detail: 'cancelled',
      timedOut: false,
    });
    const child = readPid(join(sandbox.worktree, 'child.pid'));
    const parent = readPid(join(sandbox.worktree, 'parent.pid'));
    expect({ child: isAlive(child), parent: isAlive(parent) }).toEqual({
      child: false,
      parent: false,
    });
  });
});
