/**
 * Starts epicflow's child processes from a small helper process instead of from the test's
 * own (src/adapters/process/starter.ts).
 *
 * The tests run the engine, story jobs and the App in the jest worker, which grows to
 * 400 MB, and every process a Node process starts is a fork of it first: the kernel copies
 * its page tables and the worker then takes a fault on each page it writes. A `git
 * --version` started from a 370 MB process costs it 8 ms of system time and takes 34 ms,
 * against 0.4 ms and 5 ms from a 50 MB one. So each test file's epicflow starts its
 * processes through one helper (`process-starter-child.py`, Python because it starts a
 * process with vfork, which copies no page tables), over the helper's standard input and
 * output: the same command, arguments, environment, user, working folder and process group;
 * its output, exit and close come back in order, and the caller signals the group by its
 * pid as before.
 * Installed for every test by jest's `setupFilesAfterEnv` (start-from-helper.ts).
 */
import {
  spawn,
  type ChildProcess,
  type ChildProcessByStdio,
  type SpawnOptions,
} from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { StartProcess } from '../../src/adapters/process/starter.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'process-starter-child.py');

/** What the helper says of one child. */
interface Event {
  readonly id: number;
  readonly ev: 'spawn' | 'data' | 'error' | 'exit' | 'close';
  readonly pid?: number;
  readonly stream?: 'stdout' | 'stderr';
  readonly chunk?: Uint8Array;
  readonly error?: {
    message: string;
    code?: string;
    errno?: number;
    syscall?: string;
    path?: string;
  };
  readonly code?: number | null;
  readonly signal?: NodeJS.Signals | null;
}

/** A child's stdout or stderr as the caller reads it: `data` events, and `destroy`. */
class Output extends EventEmitter {
  destroyed = false;

  push(chunk: Uint8Array): void {
    if (!this.destroyed) {
      this.emit('data', Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    }
  }

  destroy(): this {
    this.destroyed = true;
    return this;
  }
}

/** A child process started by the helper, as much of a `ChildProcess` as epicflow uses. */
class FarChild extends EventEmitter {
  pid: number | undefined;
  readonly stdout = new Output();
  readonly stderr = new Output();
  readonly stdin: { on: () => unknown; end: (data?: string | Uint8Array) => void } | null;

  constructor(
    private readonly helper: Helper,
    private readonly id: number,
    private readonly group: boolean,
    piped: boolean,
  ) {
    super();
    const stdin = {
      on: () => stdin,
      end: (data?: string | Uint8Array) => helper.send({ op: 'stdin', id }, data),
    };
    this.stdin = piped ? stdin : null;
  }

  /** Signals the child (the helper does, once it runs); epicflow signals a running group itself. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    this.helper.send({ op: 'kill', id: this.id, signal, group: this.group });
    return true;
  }

  /** What the helper says of it. */
  hear(e: Event): void {
    if (e.ev === 'spawn') {
      this.pid = e.pid;
      this.emit('spawn');
    } else if (e.ev === 'data') {
      (e.stream === 'stderr' ? this.stderr : this.stdout).push(e.chunk ?? new Uint8Array());
    } else if (e.ev === 'error') {
      const error = Object.assign(new Error(e.error?.message ?? 'spawn failed'), e.error);
      this.emit('error', error);
    } else if (e.ev === 'exit') {
      this.emit('exit', e.code ?? null, e.signal ?? null);
    } else {
      this.emit('close', e.code ?? null, e.signal ?? null);
    }
  }

  ref(): void {}

  unref(): void {}
}

/** The Python that runs the helper: the system's own first (a version manager's shim is a script). */
function findPython(): string | undefined {
  for (const candidate of ['/usr/bin/python3', '/usr/local/bin/python3']) {
    if (existsSync(candidate)) return candidate;
  }
  for (const folder of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(folder, 'python3');
    if (folder !== '' && existsSync(candidate)) return candidate;
  }
  return undefined;
}

const python = findPython();

/** Strings as Node's own spawn would pass them: UTF-8, a lone surrogate replaced. */
const wellFormed = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

function wellFormedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[wellFormed(k)] = wellFormed(v);
  return out;
}

/** One frame: the message's JSON and a payload, each after its 4-byte length. */
function frame(message: object, payload: Uint8Array = new Uint8Array()): Buffer {
  const head = Buffer.from(JSON.stringify(message));
  const out = Buffer.allocUnsafe(8 + head.length + payload.length);
  out.writeUInt32BE(head.length, 0);
  head.copy(out, 4);
  out.writeUInt32BE(payload.length, 4 + head.length);
  out.set(payload, 8 + head.length);
  return out;
}

class Helper {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly running = new Map<number, FarChild>();
  private next = 1;
  private gone = false;
  private retiring = false;
  private input = Buffer.alloc(0);

  constructor(pythonPath: string) {
    this.child = spawn(pythonPath, ['-I', '-S', '-X', 'utf8', CHILD], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.child.stdin.on('error', () => undefined);
    this.child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.on('exit', (code, signal) => {
      this.gone = true;
      for (const far of this.running.values()) {
        far.hear({
          id: 0,
          ev: 'error',
          error: { message: `the tests' process starter ended (${signal ?? String(code)})` },
        });
        far.hear({ id: 0, ev: 'close', code: null, signal: 'SIGKILL' });
      }
      this.running.clear();
    });
    this.idle();
  }

  get alive(): boolean {
    return !this.gone;
  }

  start(command: string, args: readonly string[], options: SpawnOptions): FarChild {
    const id = this.next++;
    const stdio = Array.isArray(options.stdio) ? options.stdio : [];
    const detached = options.detached === true;
    const far = new FarChild(this, id, detached, stdio[0] === 'pipe');
    this.running.set(id, far);
    this.busy();
    const cwd = options.cwd ?? process.cwd();
    this.send({
      op: 'spawn',
      id,
      command: wellFormed(command),
      args: args.map(wellFormed),
      cwd: wellFormed(typeof cwd === 'string' ? cwd : fileURLToPath(cwd)),
      env: wellFormedEnv(options.env ?? process.env),
      stdin: stdio[0] === 'pipe' ? 'pipe' : 'ignore',
      detached,
      uid: options.uid,
      gid: options.gid,
    });
    return far;
  }

  send(
    message: { op: string; id: number; [key: string]: unknown },
    data?: string | Uint8Array,
  ): void {
    if (this.gone || this.child.stdin.destroyed) return;
    const payload = typeof data === 'string' ? Buffer.from(data) : data;
    this.child.stdin.write(frame(message, payload));
  }

  /** The helper's frames, as they come. */
  private read(chunk: Buffer): void {
    let b = this.input.length === 0 ? chunk : Buffer.concat([this.input, chunk]);
    for (;;) {
      if (b.length < 4) break;
      const headEnd = 4 + b.readUInt32BE(0);
      if (b.length < headEnd + 4) break;
      const end = headEnd + 4 + b.readUInt32BE(headEnd);
      if (b.length < end) break;
      const e = JSON.parse(b.toString('utf8', 4, headEnd)) as Event;
      this.hear(e.ev === 'data' ? { ...e, chunk: b.subarray(headEnd + 4, end) } : e);
      b = b.subarray(end);
    }
    this.input = b.length === 0 ? Buffer.alloc(0) : Buffer.from(b);
  }

  private hear(e: Event): void {
    const far = this.running.get(e.id);
    if (far === undefined) return;
    // Node closes a child that could not start too (after its error).
    if (e.ev === 'close') {
      this.running.delete(e.id);
      if (this.running.size === 0) this.idle();
    }
    far.hear(e);
    if (this.retiring && this.running.size === 0) this.end();
  }

  /**
   * Ends the helper once every child it started has closed and said so: it exits when its
   * input closes, so nothing it still has to send is lost.
   */
  retire(): void {
    this.retiring = true;
    if (this.running.size === 0) this.end();
  }

  private end(): void {
    this.child.stdin.end();
  }

  /** While a child runs, the test process waits for it; else the helper keeps nothing alive. */
  private busy(): void {
    this.child.ref();
    (this.child.stdin as Socket).ref();
    (this.child.stdout as Socket).ref();
  }

  private idle(): void {
    this.child.unref();
    (this.child.stdin as Socket).unref();
    (this.child.stdout as Socket).unref();
  }
}

let helper: Helper | undefined;

/** Starts a child process through this test file's helper process, started on first use. */
export const startFromHelper: StartProcess = (command, args, options) => {
  // Without a Python, the processes start from the test's own process, as epicflow starts them.
  if (python === undefined) return spawn(command, args, options);
  if (helper === undefined || !helper.alive) helper = new Helper(python);
  return helper.start(command, args, options) as unknown as ChildProcess;
};

/**
 * Ends this test file's helper process, if it started one, once its children have closed;
 * a process started later (by the file's own `afterAll`) gets a helper of its own.
 */
export function endHelper(): void {
  helper?.retire();
  helper = undefined;
}
