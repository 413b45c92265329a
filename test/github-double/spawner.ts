/**
 * Starts the double's git processes from the test file's small helper process
 * (test/support/process-starter.ts) instead of from the test's own: a fork of a test
 * worker of 300 MB to 1 GB costs it 15–60 ms, most of it the kernel copying the worker's
 * page tables, against 3 ms from a 40 MB process, and the double starts thousands of git
 * processes a run (plumbing for every REST read and write, `git http-backend` for every
 * fetch and push). epicflow's own processes in the same test file start from the same
 * helper.
 */
import { startFromHelper } from '../support/process-starter.js';

export interface SpawnResult {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
}

export interface SpawnRequest {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** The command's whole environment. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly input?: Buffer | string;
}

/** Runs a command to its end through the helper process. */
export function spawnVia(request: SpawnRequest): Promise<SpawnResult> {
  return new Promise((resolve, reject) => {
    const child = startFromHelper(request.command, request.args, {
      ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
      env: { ...request.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => err.push(d));
    // A command that cannot start is an error; its close after that changes nothing.
    child.on('error', reject);
    child.on('close', (code: number | null) =>
      resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }),
    );
    // The command may exit before reading its input (a failed rev-parse): not an error here.
    child.stdin?.end(request.input ?? '');
  });
}
