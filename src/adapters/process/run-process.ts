/**
 * Child processes for agents, gates, setup and git: a complete explicit
 * environment, stdin closed or fed, output captured (tail-capped) and streamed
 * by line, and a wall-clock timeout that kills the whole process group, so a
 * runaway agent cannot leave grandchildren behind.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

export interface RunProcessOptions {
  cwd: string;
  /** The COMPLETE environment: nothing is inherited implicitly. */
  env: Readonly<Record<string, string>>;
  /** Written to stdin, then stdin is closed; when absent stdin is /dev/null. */
  input?: string;
  /** Wall clock; on expiry the whole process group gets SIGTERM, then SIGKILL after 2 s. */
  timeoutMs: number;
  /** Abort kills the group the same way. */
  signal?: AbortSignal;
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
  /** Keep at most this many bytes of each stream (the tail). Default 1 MiB. */
  maxCaptureBytes?: number;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** The process could not start (binary missing, not executable, bad cwd). Never thrown. */
  spawnError?: { code: 'ENOENT' | 'EACCES' | string; message: string };
}

const KILL_GRACE_MS = 2000;
const DEFAULT_CAPTURE = 1024 * 1024;
const MAX_LINE_CHARS = 1024 * 1024;
const MAX_TIMER_MS = 2_147_483_647;

/** Keeps the last `max` bytes written to it. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = false;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.max && this.chunks.length > 0) {
      const first = this.chunks[0] as Buffer;
      const excess = this.size - this.max;
      this.dropped = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  text(): string {
    const s = Buffer.concat(this.chunks).toString('utf8');
    // A cut through a multi-byte character decodes to U+FFFD at the start: drop it.
    return this.dropped ? s.replace(/^\uFFFD+/, '') : s;
  }
}

/** Splits a byte stream into lines (without the terminator) for `onLine`. */
class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer): void {
    this.pending += this.decoder.write(chunk);
    let nl = this.pending.indexOf('\n');
    while (nl >= 0) {
      this.emit(this.pending.slice(0, nl).replace(/\r$/, ''));
      this.pending = this.pending.slice(nl + 1);
      nl = this.pending.indexOf('\n');
    }
    // A stream that never ends a line must not grow without bound: hand it over in pieces.
    if (this.pending.length > MAX_LINE_CHARS) {
      this.emit(this.pending);
      this.pending = '';
    }
  }

  end(): void {
    this.pending += this.decoder.end();
    if (this.pending !== '') this.emit(this.pending.replace(/\r$/, ''));
    this.pending = '';
  }
}

function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // Negative pid: the whole group the child leads (it was spawned detached).
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function describeSpawnError(
  err: NodeJS.ErrnoException,
  command: string,
  cwd: string,
): { code: string; message: string } {
  const code = err.code ?? 'UNKNOWN';
  if (code === 'ENOENT') {
    let cwdOk = false;
    try {
      cwdOk = statSync(cwd).isDirectory();
    } catch {
      cwdOk = false;
    }
    if (!cwdOk) return { code, message: `working directory not found: ${cwd}` };
    return { code, message: `command not found: ${command}` };
  }
  if (code === 'EACCES') return { code, message: `command not executable: ${command}` };
  return { code, message: `could not start ${command}: ${err.message}` };
}

/**
 * Runs `argv` without a shell. Never throws for a process that cannot start:
 * the result carries `spawnError` instead.
 */
export function runProcess(
  argv: readonly string[],
  options: RunProcessOptions,
): Promise<ProcessResult> {
  const [command, ...args] = argv;
  if (command === undefined || command === '') {
    return Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: false,
      stdout: '',
      stderr: '',
      durationMs: 0,
      spawnError: { code: 'ENOENT', message: 'command not found: (empty command)' },
    });
  }
  const max = options.maxCaptureBytes ?? DEFAULT_CAPTURE;
  const started = performance.now();

  return new Promise<ProcessResult>((resolve) => {
    const out = new TailBuffer(max);
    const err = new TailBuffer(max);
    const onLine = options.onLine;
    const outLines = onLine ? new LineSplitter((l) => onLine('stdout', l)) : undefined;
    const errLines = onLine ? new LineSplitter((l) => onLine('stderr', l)) : undefined;

    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let spawnError: ProcessResult['spawnError'];
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    if (options.signal?.aborted) {
      resolve({
        exitCode: null,
        signal: null,
        timedOut: false,
        aborted: true,
        stdout: '',
        stderr: '',
        durationMs: 0,
      });
      return;
    }

    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...options.env },
      // Its own process group, so the whole tree can be killed at once.
      detached: true,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });

    const terminate = (): void => {
      killGroup(child.pid, 'SIGTERM');
      const t = setTimeout(() => {
        killGroup(child.pid, 'SIGKILL');
        // Grandchildren that ignored SIGTERM and hold our pipes open must not hang us.
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, KILL_GRACE_MS);
      t.unref();
      timers.push(t);
    };

    // Node fires over-long (or infinite) delays at once: clamp, and treat Infinity as none.
    if (Number.isFinite(options.timeoutMs)) {
      const timeout = setTimeout(
        () => {
          timedOut = true;
          terminate();
        },
        Math.min(Math.max(options.timeoutMs, 0), MAX_TIMER_MS),
      );
      timers.push(timeout);
    }

    const onAbort = (): void => {
      aborted = true;
      terminate();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener('abort', onAbort);
      outLines?.end();
      errLines?.end();
      const result: ProcessResult = {
        exitCode,
        signal: exitSignal,
        timedOut,
        aborted,
        stdout: out.text(),
        stderr: err.text(),
        durationMs: Math.round(performance.now() - started),
      };
      if (spawnError) result.spawnError = spawnError;
      resolve(result);
    };

    child.stdout?.on('data', (chunk: Buffer) => {
      out.push(chunk);
      outLines?.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      err.push(chunk);
      errLines?.push(chunk);
    });

    if (child.stdin) {
      // A child that never reads its stdin must not crash us with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }

    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError = describeSpawnError(e, command, options.cwd);
      finish();
    });

    child.on('exit', (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      // Background processes the child left behind (a dev server a gate started,
      // an agent's helper) belong to its group: end them too, so pipes close.
      killGroup(child.pid, 'SIGTERM');
      const t = setTimeout(() => {
        killGroup(child.pid, 'SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, KILL_GRACE_MS);
      t.unref();
      timers.push(t);
    });

    child.on('close', () => finish());
  });
}

/** Finds an executable on the given PATH. */
function which(name: string, env: Readonly<Record<string, string>>): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Runs a command line with `bash -c` (or `sh -c` when bash is missing), for gates and setup. */
export function runShell(command: string, options: RunProcessOptions): Promise<ProcessResult> {
  const bash = which('bash', options.env);
  // --norc: node's stdin is a socket, and `bash -c` with a socket on stdin
  // believes it was started by rshd/sshd and would source ~/.bashrc.
  if (bash) return runProcess([bash, '--norc', '-c', command], options);
  return runProcess([which('sh', options.env) ?? '/bin/sh', '-c', command], options);
}

/** Variables a CLI needs to work normally; nothing that carries a credential. */
const BASE_ENV_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TEMP',
  'TMP',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  // Windows needs these to start almost anything.
  'SystemRoot',
  'SYSTEMROOT',
  'ComSpec',
  'COMSPEC',
  'PATHEXT',
  'WINDIR',
]);

/**
 * The environment every child starts from: an allowlist (PATH, HOME, locale,
 * temp dir, terminal, proxies). GitHub and Actions tokens, GIT_* variables and
 * everything else stay behind; callers add what a child really needs.
 */
export function baseEnv(source: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (BASE_ENV_NAMES.has(name) || name.startsWith('LC_')) env[name] = value;
  }
  return env;
}
