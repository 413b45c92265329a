import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, runProcess, runShell } from '../../../src/adapters/process/run-process.js';
import { startProcessesWith, type StartProcess } from '../../../src/adapters/process/starter.js';
import { startFromHelper } from '../../support/process-starter.js';

let dir: string;
const env = baseEnv(process.env);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-process-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Alive and not a zombie (a container's init may not reap orphans at once). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  try {
    const state = readFileSync(stat, 'utf8')
      .replace(/^.*\) /s, '')
      .charAt(0);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number): Promise<boolean> {
  // The group was signalled before runProcess resolved; give the kernel a moment to deliver.
  for (let i = 0; i < 50 && isRunning(pid); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return !isRunning(pid);
}

// Every rule both ways: epicflow starts its processes with Node's own spawn; the other tests
// start them from a small helper process (test/support/process-starter.ts), which must
// behave the same.
const STARTERS: [string, StartProcess | undefined][] = [
  ["Node's spawn, as epicflow does", undefined],
  ["the tests' helper process", startFromHelper],
];

describe.each(STARTERS)('runProcess, started by %s', (_how, starter) => {
  beforeAll(() => startProcessesWith(starter));
  afterAll(() => startProcessesWith(startFromHelper));

  it('reports exit codes and captures both streams', async () => {
    const r = await runShell('echo out; echo err >&2; exit 3', { cwd: dir, env, timeoutMs: 30000 });
    expect(r.exitCode).toBe(3);
    expect(r.signal).toBeNull();
    expect(r.timedOut).toBe(false);
    expect(r.aborted).toBe(false);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('err\n');
    expect(r.spawnError).toBeUndefined();
  });

  it('runs in the given working directory', async () => {
    const r = await runProcess(['pwd'], { cwd: dir, env, timeoutMs: 30000 });
    expect(r.stdout.trim()).toBe(dir);
  });

  it('delivers input on stdin and closes it', async () => {
    const r = await runProcess(['cat'], { cwd: dir, env, timeoutMs: 30000, input: 'hello\nworld' });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('hello\nworld');
  });

  it('gives a child without input an empty, closed stdin', async () => {
    const r = await runProcess(['cat'], { cwd: dir, env, timeoutMs: 30000 });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('survives a child that never reads its input', async () => {
    const big = 'x'.repeat(4 * 1024 * 1024);
    const r = await runShell('exit 0', { cwd: dir, env, timeoutMs: 30000, input: big });
    expect(r.exitCode).toBe(0);
  });

  it('passes only the given environment: a parent GITHUB_TOKEN never reaches the child', async () => {
    const parent = {
      ...process.env,
      GITHUB_TOKEN: 'ghp_secret',
      GH_TOKEN: 'x',
      ACTIONS_RUNTIME_TOKEN: 'y',
    };
    process.env.EPICFLOW_TEST_LEAK = 'leaked';
    try {
      const childEnv: Record<string, string> = { ...baseEnv(parent), MINE: 'yes' };
      expect(childEnv.GITHUB_TOKEN).toBeUndefined();
      expect(childEnv.PATH).toBe(process.env.PATH);
      const r = await runShell(
        'echo "[${GITHUB_TOKEN-}][${GH_TOKEN-}][${ACTIONS_RUNTIME_TOKEN-}][${EPICFLOW_TEST_LEAK-}][$MINE]"',
        { cwd: dir, env: childEnv, timeoutMs: 30000 },
      );
      expect(r.stdout.trim()).toBe('[][][][][yes]');
    } finally {
      delete process.env.EPICFLOW_TEST_LEAK;
    }
  });

  it('keeps only the tail of a large output', async () => {
    const r = await runShell('for i in $(seq 1 2000); do echo "line $i"; done', {
      cwd: dir,
      env,
      timeoutMs: 30000,
      maxCaptureBytes: 100,
    });
    expect(r.stdout.length).toBeLessThanOrEqual(100);
    expect(r.stdout.endsWith('line 2000\n')).toBe(true);
  });

  it('says so in the first line when it keeps only the tail', async () => {
    const r = await runShell('for i in $(seq 1 20000); do echo "line $i"; done; echo oops >&2', {
      cwd: dir,
      env,
      timeoutMs: 30000,
      maxCaptureBytes: 4096,
    });
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^\[… \d+\.\d KiB cut; last \d+\.\d KiB shown\]$/);
    // After the notice, whole lines only, up to the last one.
    expect(lines[1]).toMatch(/^line \d+$/);
    expect(r.stdout.endsWith('line 20000\n')).toBe(true);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(4096);
    const total = Array.from({ length: 20000 }, (_, i) => `line ${i + 1}\n`).join('').length;
    const shown = Buffer.byteLength(r.stdout) - Buffer.byteLength(`${lines[0] as string}\n`);
    expect(r.cutBytes.stdout).toBe(total - shown);
    // A stream that fit is left alone.
    expect(r.stderr).toBe('oops\n');
    expect(r.cutBytes.stderr).toBe(0);
  });

  it('keeps output whole when asked, however large', async () => {
    const r = await runShell('head -c 5000000 /dev/zero | tr "\\0" x; echo; echo end', {
      cwd: dir,
      env,
      timeoutMs: 30000,
      wholeOutput: { limitBytes: 8 * 1024 * 1024 },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(5_000_000 + 'end\n'.length + 1);
    expect(r.stdout.startsWith('xxxx')).toBe(true);
    expect(r.stdout.endsWith('x\nend\n')).toBe(true);
    expect(r.cutBytes).toEqual({ stdout: 0, stderr: 0 });
    expect(r.overflow).toBeUndefined();
  });

  it('never cuts whole output: past the limit the process is stopped and the result says so', async () => {
    // `yes` never ends by itself: only the overflow stops it.
    const r = await runProcess(['yes', 'a line of output'], {
      cwd: dir,
      env,
      timeoutMs: 60000,
      wholeOutput: { limitBytes: 1024 * 1024 },
    });
    expect(r.overflow).toBe('stdout');
    expect(r.stdout).toBe('');
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBeNull();
  });

  it('refuses to be asked for the tail and the whole at once', () => {
    expect(() =>
      runProcess(['true'], {
        cwd: dir,
        env,
        timeoutMs: 1000,
        maxCaptureBytes: 10,
        wholeOutput: { limitBytes: 10 },
      }),
    ).toThrow('maxCaptureBytes and wholeOutput exclude each other');
  });

  it('streams lines of both streams to onLine', async () => {
    const lines: string[] = [];
    await runShell('printf "a\\nb"; echo c >&2', {
      cwd: dir,
      env,
      timeoutMs: 30000,
      onLine: (stream, line) => lines.push(`${stream}:${line}`),
    });
    expect(lines.sort()).toEqual(['stderr:c', 'stdout:a', 'stdout:b']);
  });

  it('ends a child that runs past its timeout', async () => {
    const r = await runShell('exec sleep 100', { cwd: dir, env, timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGTERM');
  });

  it('kills the whole process group, grandchildren included, once the child has started', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    const stop = new AbortController();
    const r = await runShell(`sleep 100 & echo $! > '${pidFile}'; echo started; sleep 100; wait`, {
      cwd: dir,
      env,
      timeoutMs: 60000,
      signal: stop.signal,
      // The clock starts once the child says it started: a loaded machine cannot fail this.
      onLine: (_stream, line) => {
        if (line === 'started') stop.abort();
      },
    });
    expect(r.aborted).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGTERM');
    const grandchild = Number((await readFile(pidFile, 'utf8')).trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(await waitUntilGone(grandchild)).toBe(true);
  });

  it('never sources ~/.bashrc, even with input on stdin', async () => {
    const home = join(dir, 'home');
    const marker = join(dir, 'bashrc-ran');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, '.bashrc'), `echo ran > '${marker}'\n`);
    const r = await runShell('cat', {
      cwd: dir,
      env: { ...env, HOME: home },
      timeoutMs: 30000,
      input: 'in',
    });
    expect(r.stdout).toBe('in');
    expect(existsSync(marker)).toBe(false);
  });

  it('treats an infinite timeout as none', async () => {
    const r = await runShell('echo fine', { cwd: dir, env, timeoutMs: Infinity });
    expect(r.timedOut).toBe(false);
    expect(r.stdout).toBe('fine\n');
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const stop = new AbortController();
    const r = await runShell("trap '' TERM; echo started; sleep 100 & wait", {
      cwd: dir,
      env,
      timeoutMs: 60000,
      signal: stop.signal,
      // Only once the trap is set: before it, SIGTERM would end the shell.
      onLine: (_stream, line) => {
        if (line === 'started') stop.abort();
      },
    });
    expect(r.aborted).toBe(true);
    expect(r.signal).toBe('SIGKILL');
  });

  it('ends background processes a child leaves behind', async () => {
    const pidFile = join(dir, 'leftover.pid');
    const r = await runShell(`sleep 100 & echo $! > '${pidFile}'; exit 0`, {
      cwd: dir,
      env,
      timeoutMs: 60000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    const leftover = Number((await readFile(pidFile, 'utf8')).trim());
    expect(await waitUntilGone(leftover)).toBe(true);
  });

  it('kills the group on abort', async () => {
    const controller = new AbortController();
    const pending = runShell('echo started; sleep 100', {
      cwd: dir,
      env,
      timeoutMs: 60000,
      signal: controller.signal,
      onLine: (_s, line) => {
        if (line === 'started') controller.abort();
      },
    });
    const r = await pending;
    expect(r.aborted).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBeNull();
  });

  it('does not start when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await runShell('echo no', {
      cwd: dir,
      env,
      timeoutMs: 60000,
      signal: controller.signal,
    });
    expect(r.aborted).toBe(true);
    expect(r.stdout).toBe('');
  });

  it('reports a missing binary as spawnError, without throwing', async () => {
    const r = await runProcess(['epicflow-no-such-binary', '--x'], {
      cwd: dir,
      env,
      timeoutMs: 30000,
    });
    expect(r.spawnError).toEqual({
      code: 'ENOENT',
      message: 'command not found: epicflow-no-such-binary',
    });
    expect(r.exitCode).toBeNull();
  });

  it('reports a missing working directory as such', async () => {
    const r = await runProcess(['true'], { cwd: join(dir, 'nope'), env, timeoutMs: 30000 });
    expect(r.spawnError?.code).toBe('ENOENT');
    expect(r.spawnError?.message).toBe(`working directory not found: ${join(dir, 'nope')}`);
  });

  it('reports a file that is not executable', async () => {
    const script = join(dir, 'not-exec.sh');
    await writeFile(script, '#!/bin/sh\necho hi\n');
    const r = await runProcess([script], { cwd: dir, env, timeoutMs: 30000 });
    expect(r.spawnError?.code).toBe('EACCES');
    expect(r.spawnError?.message).toBe(`command not executable: ${script}`);
  });
});
