/**
 * Ending what a step left behind by its marker: every process carrying the step's marker
 * variable is killed. Only processes started since the step began can carry it, so only
 * those are read (`pidMark` before the step): the kernel gives pids in increasing order and
 * goes round to the lowest after `kernel.pid_max`; after a long step every process is read.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pidMark, reapMarked, RUN_MARKER } from '../../../src/adapters/process/reap.js';

let children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  children = [];
});

/** A process in a session of its own carrying `marker`, as a tool an agent left behind. */
function leftBehind(marker: string): number {
  const child = spawn('sleep', ['60'], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', [RUN_MARKER]: marker },
  });
  children.push(child);
  return child.pid ?? 0;
}

const alive = (pid: number): boolean => {
  try {
    return !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

describe('reaping by the marker', () => {
  it('kills a marked process started since the mark', async () => {
    const since = await pidMark();
    expect(since).toBeDefined();
    const pid = leftBehind('m-since');
    expect(await reapMarked('m-since', since)).toEqual([pid]);
    expect(alive(pid)).toBe(false);
  });

  it('reads no process started before the mark: it cannot carry a marker made after it', async () => {
    const pid = leftBehind('m-before');
    const since = await pidMark();
    expect(await reapMarked('m-before', since)).toEqual([]);
    expect(alive(pid)).toBe(true);
    // Without a mark, every process is read.
    expect(await reapMarked('m-before')).toEqual([pid]);
  });

  it('finds a process given a low pid after the kernel went round past pid_max', async () => {
    const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
    const pid = leftBehind('m-round');
    // A mark just below the highest pid: the kernel went round since.
    expect(await reapMarked('m-round', { pid: max - 1, at: Date.now() })).toEqual([pid]);
  });

  it('reads every process after a long step, the mark no longer trusted', async () => {
    const pid = leftBehind('m-long');
    const since = await pidMark();
    const old = { pid: since?.pid ?? 0, at: Date.now() - 61_000 };
    expect(await reapMarked('m-long', old)).toEqual([pid]);
  });
});
