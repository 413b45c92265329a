/**
 * The real Gemini CLI (@google/gemini-cli 0.61.0) through CliExecutor against the
 * scripted model server on 127.0.0.1 (Gemini's streamGenerateContent, SSE).
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliExecutor } from '../../../src/adapters/executors/cli-executor.js';
import { explainWith, startModelServer } from '../../support/model-server/index.js';
import { AGENT_CLIS_INSTALL_MS, agentCliBin } from '../../support/agent-clis.js';
import type { ModelServer, Step } from '../../support/model-server/index.js';
import { executorConfig, makeSandbox, turnRequest } from './helpers.js';
import type { Sandbox } from './helpers.js';
import type { TurnRequest } from '../../../src/core/executor.js';

const USAGE = { input: 1000, cachedInput: 100, output: 20 };

let server: ModelServer | undefined;
let sandbox: Sandbox | undefined;

afterEach(async () => {
  await server?.close();
  sandbox?.cleanup();
  server = undefined;
  sandbox = undefined;
});

/** The pinned CLI (test/agent-clis), installed into the tests' cache folder on first use. */
let geminiBin = '';
beforeAll(async () => {
  geminiBin = await agentCliBin('gemini');
}, AGENT_CLIS_INSTALL_MS);

async function run(
  script: Step[],
  binary = geminiBin,
  options: { role?: TurnRequest['role']; plant?: (worktree: string) => void } = {},
) {
  server = await startModelServer(script);
  sandbox = makeSandbox();
  options.plant?.(sandbox.worktree);
  // Gemini CLI writes a report of each failed model call into its temp folder: the
  // sandbox's, removed with it, not the machine's /tmp.
  const tmp = join(dirname(sandbox.worktree), 'tmp');
  mkdirSync(tmp);
  const config = executorConfig('gemini', { model: 'gemini-2.5-pro' });
  const executor = new CliExecutor(config, {
    binary,
    baseUrl: server.url,
    // Any stray request would go to the server as a proxy CONNECT and be recorded.
    sourceEnv: {
      PATH: process.env.PATH,
      TMPDIR: tmp,
      GITHUB_TOKEN: 'ghs_must_not_leak',
      HTTPS_PROXY: server.url,
      HTTP_PROXY: server.url,
      NO_PROXY: '127.0.0.1',
    },
  });
  const request = turnRequest(sandbox, config, {
    env: { GEMINI_API_KEY: 'gemini-test-key' },
    timeoutMs: 60_000,
    ...(options.role === undefined ? {} : { role: options.role }),
  });
  const record = await executor.runTurn(request, new AbortController().signal);
  return { record, server, sandbox };
}

/** A workspace `.gemini/settings.json` whose tool discovery runs a command: it leaves `marker`. */
function plantSettings(marker: string): (worktree: string) => void {
  return (worktree) => {
    mkdirSync(join(worktree, '.gemini'), { recursive: true });
    writeFileSync(
      join(worktree, '.gemini', 'settings.json'),
      JSON.stringify({ tools: { discoveryCommand: `sh -c "touch '${marker}' && echo []"` } }),
    );
  };
}

describe('gemini contract (real binary)', () => {
  // Every helper role (judge, verifier, planner, reviewer) gets the same settings
  // (test/core/harness/gemini.test.ts): the judge's run shows what they do.
  it('a judge never trusts the workspace: the settings a coder planted in the tree do not load', async () => {
    const marker = join(tmpdir(), `epicflow-gemini-planted-${process.pid}-judge`);
    rmSync(marker, { force: true });
    const { record, server } = await run(
      [{ kind: 'message', text: 'Read it.', usage: USAGE }],
      geminiBin,
      { role: 'judge', plant: plantSettings(marker) },
    );
    await explainWith(server, () => {
      expect({ outcome: record.outcome, detail: record.detail }).toEqual({
        outcome: 'ok',
        detail: '',
      });
      expect(record.finalMessage).toBe('Read it.');
      expect(existsSync(marker)).toBe(false);
    });
  });

  it("a coder's workspace is its own: trusted, its settings load (what a helper's must not)", async () => {
    const marker = join(tmpdir(), `epicflow-gemini-planted-${process.pid}-coder`);
    rmSync(marker, { force: true });
    const { record, server } = await run(
      [{ kind: 'message', text: 'Done.', usage: USAGE }],
      geminiBin,
      { plant: plantSettings(marker) },
    );
    await explainWith(server, () => {
      expect({ outcome: record.outcome, detail: record.detail }).toEqual({
        outcome: 'ok',
        detail: '',
      });
      expect(existsSync(marker)).toBe(true);
    });
    rmSync(marker, { force: true });
  });

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
      join(geminiBin, '..', 'no-such-gemini'),
    );
    expect(record.missingBinary).toBe(true);
    expect(server.modelRequests()).toHaveLength(0);
  });
});
