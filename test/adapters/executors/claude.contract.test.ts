/**
 * The real Claude Code binary (@anthropic-ai/claude-code 2.1.197) through
 * CliExecutor against the scripted model server on 127.0.0.1; one turn in the kernel sandbox
 * in a story tree, where it runs git in a repository of the step's own.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliExecutor } from '../../../src/adapters/executors/cli-executor.js';
import { sandbox as kernelSandbox } from '../../../src/adapters/process/sandbox.js';
import { sameUser } from '../../../src/adapters/process/untrusted.js';
import { describeNeeding } from '../../support/needs.js';
import { explainWith, startModelServer } from '../../support/model-server/index.js';
import { AGENT_CLIS_INSTALL_MS, agentCliBin } from '../../support/agent-clis.js';
import type { ModelServer, Step } from '../../support/model-server/index.js';
import { executorConfig, isAlive, makeSandbox, readPid, turnRequest } from './helpers.js';
import type { Sandbox } from './helpers.js';

const USAGE = { input: 1000, cachedInput: 100, cacheWrite: 50, output: 20 };

let server: ModelServer | undefined;
let sandbox: Sandbox | undefined;

afterEach(async () => {
  await server?.close();
  sandbox?.cleanup();
  server = undefined;
  sandbox = undefined;
});

/** The pinned CLI (test/agent-clis), installed into the tests' cache folder on first use. */
let claudeBin = '';
beforeAll(async () => {
  claudeBin = await agentCliBin('claude');
}, AGENT_CLIS_INSTALL_MS);

/** `seat`: an API key, or a subscription login (whose limits carry reset times). */
async function run(
  script: Step[],
  seat: 'api-key' | 'subscription' = 'api-key',
  timeoutMs = 60_000,
  /** The turn's AbortSignal fires once the server answers a step of this kind. */
  cancelAt?: Step['kind'],
  /** What an earlier turn left in the tree, written before this one. */
  prepare?: (sandbox: Sandbox) => void,
) {
  server = await startModelServer(script);
  sandbox = makeSandbox();
  prepare?.(sandbox);
  const config = executorConfig('claude', { model: 'claude-sonnet-4-5' });
  const executor = new CliExecutor(config, {
    binary: claudeBin,
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
  const credential =
    seat === 'api-key'
      ? { ANTHROPIC_API_KEY: 'sk-ant-test-key' }
      : { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-test' };
  const request = turnRequest(sandbox, config, {
    // The CLI's own retries off, so error cases end in about a second.
    env: { ...credential, CLAUDE_CODE_MAX_RETRIES: '0', GH_TOKEN: 'gho_must_not_leak' },
    timeoutMs,
  });
  const cancel = new AbortController();
  if (cancelAt !== undefined) void server.reached(cancelAt).then(() => cancel.abort());
  const record = await executor.runTurn(request, cancel.signal);
  return { record, server, sandbox };
}

describe('claude contract (real binary)', () => {
  it('never runs hooks of a .claude/settings.json an earlier turn left in the tree', async () => {
    let marker = '';
    const { record } = await run(
      [
        { kind: 'tool', command: 'echo hello > hello.txt', usage: USAGE },
        { kind: 'message', text: 'Done.', usage: USAGE },
      ],
      'api-key',
      60_000,
      undefined,
      (box) => {
        // A coder's hooks, planted for the judge that reads this tree next.
        marker = join(box.worktree, '..', 'hook-ran');
        const hook = [{ hooks: [{ type: 'command', command: `touch ${marker}` }] }];
        mkdirSync(join(box.worktree, '.claude'), { recursive: true });
        writeFileSync(
          join(box.worktree, '.claude', 'settings.json'),
          JSON.stringify({
            hooks: {
              SessionStart: hook,
              UserPromptSubmit: hook,
              PreToolUse: [{ matcher: '*', hooks: hook[0]?.hooks }],
              Stop: hook,
            },
          }),
        );
      },
    );
    expect(record.outcome).toBe('ok');
    expect(readFileSync(join(sandbox?.worktree ?? '', 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('runs a tool call in the worktree and reports the usage and cost it measured', async () => {
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
      // Its session's folder (its shells' task output) is in the turn's home, not in the
      // `/tmp/claude-<uid>` every turn of the user would share and nothing removes.
      const claudeTmp = `claude-${process.getuid?.() ?? 0}`;
      const project = sandbox.worktree.replace(/[^A-Za-z0-9-]/g, '-');
      expect(readdirSync(join(sandbox.home, '.claude', 'tmp', claudeTmp, project))).toHaveLength(1);
      expect(existsSync(join('/tmp', claudeTmp, project))).toBe(false);
      expect(record.blockedOn).toBeUndefined();
      // Summed over the two requests; the cost is Claude Code's own (built-in list prices).
      expect(record.usage).toHaveLength(1);
      expect(record.usage[0]).toMatchObject({
        executor: 'claude',
        model: 'claude-sonnet-4-5',
        tokens: { input: 2000, cachedInput: 200, cacheWrite: 100, output: 40 },
        measured: true,
        costSource: 'cli',
      });
      expect(record.usage[0]?.costUsd).toBeCloseTo(0.007035, 9);
      const requests = server.modelRequests();
      expect(requests.map((r) => r.path)).toEqual([
        '/v1/messages?beta=true',
        '/v1/messages?beta=true',
      ]);
      expect(requests[0]?.headers['x-api-key']).toBe('sk-ant-test-key');
      const tools = ((requests[0]?.body as { tools?: { name?: string }[] }).tools ?? []).map(
        (t) => t.name,
      );
      expect(tools).toEqual(expect.arrayContaining(['Bash', 'Write']));
      expect(server.strayRequests()).toEqual([]);
      const env = readFileSync(join(sandbox.worktree, 'env.txt'), 'utf8');
      expect(env).not.toMatch(/GITHUB_TOKEN|GH_TOKEN|must_not_leak/);
      expect(env).toContain(`HOME=${sandbox.home}`);
    });
  });

  it('reports BLOCKED_ON from the final message', async () => {
    const { record } = await run([
      {
        kind: 'message',
        text: 'I need the API first.\n\nBLOCKED_ON: src/api.ts (story api)',
        usage: USAGE,
      },
    ]);
    expect(record.outcome).toBe('ok');
    expect(record.blockedOn).toBe('src/api.ts (story api)');
  });

  it('reads a subscription usage limit with its reset time', async () => {
    const resetsAt = new Date(Math.floor(Date.now() / 1000 + 2 * 3600) * 1000);
    const { record } = await run([{ kind: 'usage-limit', resetsAt }], 'subscription');
    expect(record.outcome).toBe('usage-limit');
    expect(record.resetAt).toBe(resetsAt.toISOString());
    expect(record.detail).toMatch(/hit your session limit/);
    expect(record.usage).toEqual([]);
  });

  it.each([
    ['rate-limit', { kind: 'rate-limit', retryAfterSeconds: 1 }, 'rate-limited', /429/],
    ['overload', { kind: 'overload' }, 'outage', /529 Overloaded/],
    ['auth', { kind: 'auth' }, 'auth', /Invalid API key/],
  ] as const)('classifies a %s answer', async (_name, step, outcome, detail) => {
    const { record, server } = await run([step]);
    expect(record.outcome).toBe(outcome);
    expect(record.detail).toMatch(detail);
    expect(server.strayRequests()).toEqual([]);
    expect(server.modelRequests()).toHaveLength(1);
  });

  it('ends a hung claude and the processes it started when its turn is cancelled', async () => {
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
      'api-key',
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

describeNeeding(['sandbox'], 'claude in the kernel sandbox, in a story tree (real binary)', () => {
  it("runs git in its story's tree and tells the model the branch it is on", async () => {
    // A repository and a linked tree, as epicflow makes a story's; the step gets a
    // repository of its own there.
    const root = mkdtempSync(join(tmpdir(), 'epicflow-claude-git-'));
    const repo = join(root, 'repo');
    const tree = join(root, 'trees', 'a');
    const git = (cwd: string, ...args: string[]): string =>
      execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' }).trim();
    try {
      execFileSync('git', ['init', '-q', '-b', 'main', repo]);
      git(
        repo,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@x',
        'commit',
        '-q',
        '--allow-empty',
        '-m',
        'first',
      );
      git(repo, 'tag', 'v1.0.0');
      git(repo, 'worktree', 'add', '-q', '-b', 'story/e/a', tree);
      mkdirSync(join(root, 'home'));
      server = await startModelServer([
        {
          kind: 'tool',
          command:
            'git branch --show-current > git.txt; git describe --tags >> git.txt; git status --porcelain >> git.txt',
          usage: USAGE,
        },
        { kind: 'message', text: 'Done.', usage: USAGE },
      ]);
      const config = executorConfig('claude', { model: 'claude-sonnet-4-5' });
      const walls = await kernelSandbox(
        { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        join(root, 'scratch'),
        [],
        join(repo, '.git'),
      );
      const executor = new CliExecutor(config, {
        binary: claudeBin,
        baseUrl: server.url,
        untrusted: sameUser(walls),
        sourceEnv: {
          PATH: process.env.PATH,
          HTTPS_PROXY: server.url,
          HTTP_PROXY: server.url,
          NO_PROXY: '127.0.0.1',
        },
      });
      const request = turnRequest(
        { worktree: tree, home: join(root, 'home'), cleanup: () => undefined },
        config,
        {
          env: { ANTHROPIC_API_KEY: 'sk-ant-test-key', CLAUDE_CODE_MAX_RETRIES: '0' },
          timeoutMs: 60_000,
        },
      );
      const record = await executor.runTurn(request, new AbortController().signal);
      const seen = server;
      await explainWith(seen, () => {
        expect({ outcome: record.outcome, detail: record.detail }).toEqual({
          outcome: 'ok',
          detail: '',
        });
        expect(readFileSync(join(tree, 'git.txt'), 'utf8')).toBe('story/e/a\nv1.0.0\n?? git.txt\n');
        // What Claude Code gathers of the repository for its model, as outside the sandbox.
        const told = JSON.stringify(seen.modelRequests()[0]?.body ?? '');
        expect(told).toContain('Is a git repository: true');
        expect(told).toContain('Current branch: story/e/a');
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 270_000);
});
