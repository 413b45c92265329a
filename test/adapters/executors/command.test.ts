import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandExecutor } from '../../../src/adapters/executors/command.js';
import { blockedOnClaim, parseUsageLine } from '../../../src/adapters/executors/usage-line.js';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import type { TurnRequest } from '../../../src/core/executor.js';

let root: string;
let worktree: string;
let home: string;
let bin: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'epicflow-command-'));
  worktree = join(root, 'worktree');
  home = join(root, 'home');
  bin = join(root, 'bin');
  await mkdir(worktree);
  await mkdir(bin);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes an executable bash agent script and returns its path. */
async function agent(name: string, body: string): Promise<string> {
  const path = join(bin, name);
  await writeFile(path, `#!/usr/bin/env bash\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

function executor(command: string[], extra: Partial<ExecutorConfig> = {}): ExecutorConfig {
  return {
    id: 'scripted',
    harness: 'command',
    command,
    args: [],
    slots: 1,
    priority: 100,
    roles: ['coder'],
    env: {},
    ...extra,
  };
}

function turn(exec: ExecutorConfig, extra: Partial<TurnRequest> = {}): TurnRequest {
  return {
    epic: '42',
    story: 'health',
    round: 2,
    role: 'coder',
    prompt: 'Build the health endpoint.\nThen stop.',
    worktree,
    executor: exec,
    env: {},
    home,
    timeoutMs: 30000,
    ...extra,
  };
}

const run = (req: TurnRequest, signal?: AbortSignal) =>
  new CommandExecutor({ sourceEnv: { ...process.env, GITHUB_TOKEN: 'ghp_secret' } }).runTurn(
    req,
    signal,
  );

describe('CommandExecutor', () => {
  it('runs in the worktree with the prompt on stdin, in a file, and EPICFLOW_* env', async () => {
    const script = await agent(
      'writer.sh',
      [
        'stdin=$(cat)',
        'echo "$stdin" > from-stdin.txt',
        'cp "$EPICFLOW_PROMPT_FILE" from-file.txt',
        'echo "$EPICFLOW_EPIC|$EPICFLOW_STORY|$EPICFLOW_ROUND|$MY_KEY|${GITHUB_TOKEN-none}|$HOME|$1" > env.txt',
        'echo "all done"',
      ].join('\n'),
    );
    const r = await run(
      turn(executor([script], { args: ['--fast'] }), { env: { MY_KEY: 'k-123' } }),
    );
    expect(r.outcome).toBe('ok');
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.finalMessage).toBe('all done');
    expect(r.detail).toBe('');
    expect(r.blockedOn).toBeUndefined();
    const prompt = 'Build the health endpoint.\nThen stop.';
    expect(await readFile(join(worktree, 'from-stdin.txt'), 'utf8')).toBe(`${prompt}\n`);
    expect(await readFile(join(worktree, 'from-file.txt'), 'utf8')).toBe(prompt);
    expect((await readFile(join(worktree, 'env.txt'), 'utf8')).trim()).toBe(
      `42|health|2|k-123|none|${home}|--fast`,
    );
    // The prompt file is not left in the worktree.
    expect((await readdir(worktree)).sort()).toEqual([
      'env.txt',
      'from-file.txt',
      'from-stdin.txt',
    ]);
  });

  it('estimates usage from characters when the agent reports none', async () => {
    const script = await agent('quiet.sh', 'cat > /dev/null; printf "%s\\n" 12345678');
    const r = await run(turn(executor([script], { model: 'm1' }), { prompt: 'p'.repeat(40) }));
    expect(r.usage).toEqual([
      {
        executor: 'scripted',
        model: 'm1',
        tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 3 },
        measured: false,
        costUsd: null,
        costSource: 'none',
      },
    ]);
  });

  it('sums EPICFLOW_USAGE lines per model and ignores a malformed one with a note', async () => {
    const script = await agent(
      'usage.sh',
      [
        `echo 'EPICFLOW_USAGE {"input":100,"output":20,"model":"big"}'`,
        `echo 'working'`,
        `echo 'EPICFLOW_USAGE {"input":50,"output":5,"model":"big","cachedInput":7,"costUsd":0.25}'`,
        `echo 'EPICFLOW_USAGE {"input":1,"output":2}'`,
        `echo 'EPICFLOW_USAGE {"input":"lots"}'`,
        `echo 'EPICFLOW_USAGE not json'`,
        `echo 'finished'`,
      ].join('\n'),
    );
    const r = await run(turn(executor([script], { model: 'small' })));
    expect(r.outcome).toBe('ok');
    expect(r.usage).toEqual([
      {
        executor: 'scripted',
        model: 'big',
        tokens: { input: 150, cachedInput: 7, cacheWrite: 0, output: 25 },
        measured: true,
        costUsd: 0.25,
        costSource: 'cli',
      },
      {
        executor: 'scripted',
        model: 'small',
        tokens: { input: 1, cachedInput: 0, cacheWrite: 0, output: 2 },
        measured: true,
        costUsd: null,
        costSource: 'none',
      },
    ]);
    expect(r.finalMessage).toBe('working\nfinished');
    const notes = r.detail.split('\n');
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/^ignored a malformed EPICFLOW_USAGE line: input: /);
    expect(notes[1]).toBe('ignored a malformed EPICFLOW_USAGE line: not JSON: not json');
  });

  it('treats exit 75 as a usage limit', async () => {
    const script = await agent('quota.sh', 'echo "quota exhausted" >&2; exit 75');
    const r = await run(turn(executor([script])));
    expect(r.outcome).toBe('usage-limit');
    expect(r.exitCode).toBe(75);
    expect(r.detail).toBe('exit code 75: out of quota\nquota exhausted');
  });

  it('fails on any other exit, with the output tail in the detail', async () => {
    const script = await agent('broken.sh', 'echo "compiling"; echo "error: boom" >&2; exit 2');
    const r = await run(turn(executor([script])));
    expect(r.outcome).toBe('failed');
    expect(r.exitCode).toBe(2);
    expect(r.detail).toBe('exit code 2\nerror: boom');
  });

  it('detects a BLOCKED_ON claim on the last non-empty line', async () => {
    const blocked = await agent(
      'blocked.sh',
      'echo "I need the API first."; echo "BLOCKED_ON: the /users route in src/api/users.ts"; echo ""',
    );
    const r = await run(turn(executor([blocked])));
    expect(r.outcome).toBe('ok');
    expect(r.blockedOn).toBe('the /users route in src/api/users.ts');

    const notLast = await agent('not-last.sh', 'echo "BLOCKED_ON: x"; echo "never mind, done"');
    expect((await run(turn(executor([notLast])))).blockedOn).toBeUndefined();
  });

  it('fails a missing binary with a clear detail', async () => {
    const r = await run(turn(executor(['my-agent-that-does-not-exist', '--flag'])));
    expect(r.outcome).toBe('failed');
    expect(r.exitCode).toBeNull();
    expect(r.detail).toBe('command not found: my-agent-that-does-not-exist');
    // The roster takes such an executor out for the run and hands the story on.
    expect(r.missingBinary).toBe(true);
  });

  it('kills a turn that runs past its timeout, with the last output in the detail', async () => {
    // `started` comes at once; the deadline leaves a loaded machine ample time to print it.
    const script = await agent('slow.sh', 'echo started; exec sleep 100');
    const r = await run(turn(executor([script]), { timeoutMs: 2000 }));
    expect(r.outcome).toBe('failed');
    expect(r.timedOut).toBe(true);
    expect(r.detail).toBe('timed out after 2s\nstarted');
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    const script = await agent('abortable.sh', 'sleep 100');
    const pending = run(turn(executor([script])), controller.signal);
    controller.abort();
    const r = await pending;
    expect(r.outcome).toBe('failed');
    expect(r.detail).toBe('aborted');
  });

  it('refuses an executor without a command', async () => {
    await expect(run(turn(executor([])))).rejects.toThrow(
      'executor scripted: harness "command" needs a non-empty "command" argv',
    );
  });
});

describe('command output parsing', () => {
  it('reads BLOCKED_ON through markdown emphasis and trailing usage lines', () => {
    expect(blockedOnClaim('text\n**BLOCKED_ON: the db schema**\n')).toBe('the db schema');
    expect(blockedOnClaim('`BLOCKED_ON: x`\nEPICFLOW_USAGE {"input":1,"output":1}\n')).toBe('x');
    expect(blockedOnClaim('BLOCKED_ON:   \n')).toBeUndefined();
    expect(blockedOnClaim('')).toBeUndefined();
  });

  it('parses usage lines strictly', () => {
    expect(parseUsageLine('hello')).toBeNull();
    expect(parseUsageLine('EPICFLOW_USAGEX {}')).toBeNull();
    expect(parseUsageLine('EPICFLOW_USAGE {"input":3,"output":4,"cacheWrite":2}')).toEqual({
      model: undefined,
      tokens: { input: 3, output: 4, cachedInput: 0, cacheWrite: 2 },
      costUsd: undefined,
    });
    expect(parseUsageLine('EPICFLOW_USAGE {"input":-1,"output":4}')).toHaveProperty('error');
    expect(parseUsageLine('EPICFLOW_USAGE {"input":1.5,"output":4}')).toHaveProperty('error');
  });
});
