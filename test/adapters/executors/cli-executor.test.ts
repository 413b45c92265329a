/**
 * CliExecutor plumbing with small stand-in CLIs (real processes, shell
 * scripts printing a CLI's documented output): home preparation, env, missing
 * binaries, cleanup of processes that escaped the process group.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliExecutor } from '../../../src/adapters/executors/cli-executor.js';
import { CommandExecutor } from '../../../src/adapters/executors/command.js';
import { createExecutor } from '../../../src/adapters/executors/index.js';
import { executorConfig, isAlive, makeSandbox, readPid, turnRequest } from './helpers.js';
import type { Sandbox } from './helpers.js';

let sandbox: Sandbox | undefined;
afterEach(() => {
  sandbox?.cleanup();
  sandbox = undefined;
});

function executor(config: ReturnType<typeof executorConfig>, binary: string): CliExecutor {
  return new CliExecutor(config, { binary, sourceEnv });
}

/** Writes an executable shell script into the sandbox and returns its path. */
function script(box: Sandbox, name: string, body: string): string {
  const path = join(box.worktree, '..', name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const sourceEnv = { PATH: process.env.PATH, GITHUB_TOKEN: 'ghs_must_not_leak' };

describe('CliExecutor', () => {
  it('reports a missing CLI with how to install it', async () => {
    sandbox = makeSandbox();
    const config = executorConfig('codex', { model: 'gpt-5.6' });
    const executor = new CliExecutor(config, { binary: 'epicflow-no-such-codex', sourceEnv });
    const record = await executor.runTurn(turnRequest(sandbox, config));
    expect(record).toMatchObject({
      outcome: 'failed',
      missingBinary: true,
      detail: 'codex is not installed: npm install -g @openai/codex',
      usage: [],
    });
  });

  it("reports opencode's placeholder (postinstall skipped) as a missing CLI", async () => {
    sandbox = makeSandbox();
    const config = executorConfig('opencode', { model: 'm-1' });
    // The text opencode-ai's placeholder prints when npm ran no install scripts.
    const binary = script(
      sandbox,
      'opencode',
      `echo "Error: opencode-ai's postinstall script was not run." >&2; exit 1`,
    );
    const record = await executor(config, binary).runTurn(turnRequest(sandbox, config));
    expect(record).toMatchObject({ outcome: 'failed', missingBinary: true });
  });

  it('tells a missing worktree apart from a missing CLI', async () => {
    sandbox = makeSandbox();
    const config = executorConfig('aider');
    const executor = new CliExecutor(config, { binary: 'sh', sourceEnv });
    const record = await executor.runTurn(
      turnRequest(sandbox, config, { worktree: join(sandbox.worktree, 'gone') }),
    );
    expect(record.outcome).toBe('failed');
    expect(record.missingBinary).toBeUndefined();
    expect(record.detail).toMatch(/working directory not found/);
  });

  it('reports a cancelled turn', async () => {
    sandbox = makeSandbox();
    const config = executorConfig('aider');
    const controller = new AbortController();
    controller.abort();
    const record = await new CliExecutor(config, { binary: 'sh', sourceEnv }).runTurn(
      turnRequest(sandbox, config),
      controller.signal,
    );
    expect(record).toMatchObject({ outcome: 'failed', detail: 'cancelled' });
  });

  it('writes the per-turn files privately into the home and runs in the worktree', async () => {
    sandbox = makeSandbox();
    const box = sandbox;
    const aider = script(
      box,
      'aider',
      [
        // $2 is the prompt file (--message-file FILE).
        'cat "$2" > seen-prompt.txt',
        'pwd > seen-cwd.txt',
        'env > seen-env.txt',
        'echo "Edited the file."',
        'echo "Tokens: 1.5k sent, 250 received. Cost: \\$0.01 message, \\$0.01 session."',
      ].join('\n'),
    );
    const config = executorConfig('aider', { model: 'gpt-5.4' });
    const record = await new CliExecutor(config, { binary: aider, sourceEnv }).runTurn(
      turnRequest(box, config, { env: { OPENAI_API_KEY: 'sk-1', GH_TOKEN: 'gho_must_not_leak' } }),
    );
    expect(record).toMatchObject({ outcome: 'ok', exitCode: 0, timedOut: false });
    expect(record.usage).toEqual([
      {
        executor: 'aider',
        model: 'gpt-5.4',
        tokens: { input: 1500, cachedInput: 0, cacheWrite: 0, output: 250 },
        measured: true,
        costUsd: 0.01,
        costSource: 'cli',
      },
    ]);
    expect(readFileSync(join(box.worktree, 'seen-prompt.txt'), 'utf8')).toBe(
      'Create hello.txt containing hello.',
    );
    expect(readFileSync(join(box.worktree, 'seen-cwd.txt'), 'utf8').trim()).toBe(box.worktree);
    const promptFile = join(box.home, 'prompts', '42-hello-coder-1.md');
    expect(statSync(promptFile).mode & 0o777).toBe(0o600);
    expect(statSync(box.home).mode & 0o777).toBe(0o700);
    const env = readFileSync(join(box.worktree, 'seen-env.txt'), 'utf8');
    expect(env).toContain(`HOME=${box.home}`);
    expect(env).toContain('OPENAI_API_KEY=sk-1');
    expect(env).not.toMatch(/must_not_leak/);
  });

  it('ends processes the CLI started in their own session once the turn is over', async () => {
    sandbox = makeSandbox();
    const box = sandbox;
    const claude = script(
      box,
      'claude',
      [
        'setsid sleep 300 >/dev/null 2>&1 < /dev/null &',
        'echo $! > escaped.pid',
        'echo \'{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":1,"output_tokens":1},"modelUsage":{}}\'',
      ].join('\n'),
    );
    const config = executorConfig('claude', { model: 'claude-sonnet-4-5' });
    const record = await new CliExecutor(config, { binary: claude, sourceEnv }).runTurn(
      turnRequest(box, config),
    );
    expect(record.outcome).toBe('ok');
    expect(isAlive(readPid(join(box.worktree, 'escaped.pid')))).toBe(false);
  });

  it('classifies a CLI that exits 0 after giving up on a rate limit', async () => {
    sandbox = makeSandbox();
    const aider = script(
      sandbox,
      'aider',
      [
        'echo "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached. Please try again in 20s."',
        'echo "The API provider has rate limited you. Try again later or check your quotas."',
      ].join('\n'),
    );
    const config = executorConfig('aider', { model: 'gpt-5.4' });
    const record = await new CliExecutor(config, { binary: aider, sourceEnv }).runTurn(
      turnRequest(sandbox, config),
    );
    expect(record).toMatchObject({ outcome: 'rate-limited', exitCode: 0, usage: [] });
    expect(record.detail).toMatch(/rate limited you/);
  });
});

describe('createExecutor', () => {
  it('returns the CLI executor for agent CLIs and the command executor for commands', () => {
    expect(createExecutor(executorConfig('claude'))).toBeInstanceOf(CliExecutor);
    expect(createExecutor(executorConfig('command', { command: ['agent'] }))).toBeInstanceOf(
      CommandExecutor,
    );
  });
});
