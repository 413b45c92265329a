/**
 * Starts the double's git processes from a small helper process instead of from the
 * test's own.
 *
 * Every process a Node process starts is a fork of it first, and a fork costs in
 * proportion to the parent's memory: from a test worker of 300 MB to 1 GB a `git
 * rev-parse` costs 15–60 ms, most of it the kernel copying the worker's page tables,
 * against 3 ms from a 40 MB process. The double starts thousands of git processes a
 * run (plumbing for every REST read and write, `git http-backend` for every fetch and
 * push), so they are started by one small child process (`spawner-child.mjs`) over
 * IPC. It is shared by the doubles of one test file, started with the first and ended
 * with the last, and it exits by itself when the test process goes away.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

interface Answer {
  readonly id: number;
  readonly code?: number;
  readonly stdout?: Uint8Array;
  readonly stderr?: Uint8Array;
  readonly error?: string;
}

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'spawner-child.mjs');

function buffer(bytes: Uint8Array | undefined): Buffer {
  return bytes === undefined
    ? Buffer.alloc(0)
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

class Spawner {
  private readonly child: ChildProcess;
  private readonly pending = new Map<
    number,
    { resolve: (r: SpawnResult) => void; reject: (e: Error) => void }
  >();
  private next = 1;
  private gone: Error | undefined;

  constructor() {
    this.child = fork(CHILD, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execArgv: [],
    });
    this.child.on('message', (a: Answer) => this.answer(a));
    this.child.on('exit', (code, signal) => {
      this.gone = new Error(`the double's process starter ended (${signal ?? String(code)})`);
      for (const p of this.pending.values()) p.reject(this.gone);
      this.pending.clear();
    });
    this.idle();
  }

  get alive(): boolean {
    return this.gone === undefined;
  }

  run(request: SpawnRequest): Promise<SpawnResult> {
    if (this.gone !== undefined) return Promise.reject(this.gone);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.busy();
      this.child.send({ id, ...request }, (error) => {
        if (error === null) return;
        this.pending.delete(id);
        reject(error);
      });
    });
  }

  end(): void {
    if (this.child.connected) this.child.disconnect();
  }

  private answer(a: Answer): void {
    const p = this.pending.get(a.id);
    if (p === undefined) return;
    this.pending.delete(a.id);
    if (this.pending.size === 0) this.idle();
    if (a.error !== undefined) p.reject(new Error(a.error));
    else p.resolve({ code: a.code ?? 1, stdout: buffer(a.stdout), stderr: buffer(a.stderr) });
  }

  /** While a command runs, the test process waits for it; else the helper keeps nothing alive. */
  private busy(): void {
    this.child.ref();
    this.child.channel?.ref();
  }

  private idle(): void {
    this.child.unref();
    this.child.channel?.unref();
  }
}

let shared: Spawner | undefined;
let users = 0;

/** One more user of the shared helper process (a started double). */
export function useSpawner(): void {
  users += 1;
}

/** One user fewer; the helper ends with the last. */
export function releaseSpawner(): void {
  users = Math.max(0, users - 1);
  if (users === 0 && shared !== undefined) {
    shared.end();
    shared = undefined;
  }
}

/** Runs a command to its end through the helper process, started on first use. */
export function spawnVia(request: SpawnRequest): Promise<SpawnResult> {
  if (shared === undefined || !shared.alive) shared = new Spawner();
  return shared.run(request);
}
