/**
 * Shared setup of the executor tests: a temp git worktree, an isolated home,
 * a turn request, and process liveness checks by pid.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutorConfig, Harness } from '../../../src/core/config/types.js';
import type { TurnRequest } from '../../../src/core/executor.js';

export interface Sandbox {
  readonly worktree: string;
  readonly home: string;
  cleanup(): void;
}

/** A fresh git repository with one commit, and an empty home beside it. */
export function makeSandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'epicflow-exec-'));
  const worktree = join(root, 'worktree');
  const home = join(root, 'home');
  const git = (...args: string[]): void => {
    execFileSync('git', args, { cwd: worktree, stdio: 'ignore' });
  };
  execFileSync('git', ['init', '-q', '-b', 'main', worktree], { stdio: 'ignore' });
  git(
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.com',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'init',
  );
  return { worktree, home, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function executorConfig(
  harness: Harness,
  overrides: Partial<ExecutorConfig> = {},
): ExecutorConfig {
  return {
    id: harness,
    harness,
    args: [],
    slots: 1,
    priority: 1,
    roles: ['coder'],
    env: {},
    ...overrides,
  };
}

export function turnRequest(
  sandbox: Sandbox,
  executor: ExecutorConfig,
  overrides: Partial<TurnRequest> = {},
): TurnRequest {
  return {
    epic: '42',
    story: 'hello',
    round: 1,
    role: 'coder',
    prompt: 'Create hello.txt containing hello.',
    worktree: sandbox.worktree,
    executor,
    env: {},
    home: sandbox.home,
    timeoutMs: 60_000,
    ...overrides,
  };
}

/** Alive = exists and is not a zombie (an orphan reaped late still has a pid). */
export function isAlive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    const state = readFileSync(stat, 'utf8')
      .replace(/^.*\)\s*/, '')
      .charAt(0);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export function readPid(path: string): number {
  return Number(readFileSync(path, 'utf8').trim());
}
