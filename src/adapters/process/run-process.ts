/**
 * Child processes for agents, gates, setup and git: a complete explicit
 * environment, stdin closed or fed, output captured and streamed by line, and a
 * wall-clock timeout that kills the whole process group, so a runaway agent
 * cannot leave grandchildren behind.
 *
 * Output is captured one of two ways, chosen by the caller. Text only people
 * read (gate and agent logs) keeps its tail, bounded, and says so in its first
 * line when it was cut (`cutNotice`). Output a decision is read from (git
 * plumbing) is kept whole: it is never cut; past a ceiling the process is
 * killed and the result says `overflow`, which the caller turns into an error.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { LineSplitter, TailBuffer, WholeBuffer, type Capture } from './capture.js';
import { startProcess } from './starter.js';

export interface RunProcessOptions {
  cwd: string;
  /** The COMPLETE environment: nothing is inherited implicitly. */
  env: Readonly<Record<string, string>>;
  /** Written to stdin, then stdin is closed; when absent stdin is /dev/null. */
  input?: string | Uint8Array;
  /** Wall clock; on expiry the whole process group gets SIGTERM, then SIGKILL after 2 s. */
  timeoutMs: number;
  /** Abort kills the group the same way. */
  signal?: AbortSignal;
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
  /**
   * For text only people read: keep at most this many bytes of each stream,
   * the tail. A cut stream's text starts with a line saying so (`cutNotice`),
   * counted in the bytes kept. Default 1 MiB. Not together with `wholeOutput`.
   */
  maxCaptureBytes?: number;
  /**
   * For output a decision is read from: keep every byte of both streams. A
   * stream larger than `limitBytes` is never cut: the process group is killed
   * and `overflow` names the stream (its text is then empty). `bytes`: stdout is
   * also kept as it came (`stdoutBytes`), for output that is not text.
   */
  wholeOutput?: { readonly limitBytes: number; readonly bytes?: boolean };
  /** Start the child as this user and group (the caller must be allowed to: root). */
  runAs?: { readonly uid: number; readonly gid: number };
  /**
   * Ends the child and everything it started, instead of signalling its process group:
   * for a child started through `sudo` as another user, which this process may not signal.
   */
  kill?: (signal: NodeJS.Signals) => void;
  /**
   * Called with the child's pid right before a timeout, an abort or an overflow signals
   * it (not after it exited): what it started can still be found from it then.
   */
  beforeKill?: (pid: number) => void;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  stderr: string;
  /** With `wholeOutput.bytes`: stdout byte for byte (empty after an overflow). */
  stdoutBytes?: Buffer;
  durationMs: number;
  /** Bytes left out at the start of each stream (tail capture only); 0 when all was kept. */
  cutBytes: { stdout: number; stderr: number };
  /** With `wholeOutput`: the stream that went past the limit; the process was killed. */
  overflow?: 'stdout' | 'stderr';
  /** The process could not start (binary missing, not executable, bad cwd). Never thrown. */
  spawnError?: { code: 'ENOENT' | 'EACCES' | string; message: string };
}

const KILL_GRACE_MS = 2000;
const DEFAULT_CAPTURE = 1024 * 1024;
const MAX_TIMER_MS = 2_147_483_647;

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
      cutBytes: { stdout: 0, stderr: 0 },
      spawnError: { code: 'ENOENT', message: 'command not found: (empty command)' },
    });
  }
  if (options.wholeOutput !== undefined && options.maxCaptureBytes !== undefined) {
    throw new EpicflowError(
      'internal',
      'runProcess: maxCaptureBytes and wholeOutput exclude each other',
    );
  }
  const started = performance.now();

  return new Promise<ProcessResult>((resolve) => {
    let overflow: ProcessResult['overflow'];
    const capture = (stream: 'stdout' | 'stderr'): Capture => {
      const whole = options.wholeOutput;
      if (whole === undefined) return new TailBuffer(options.maxCaptureBytes ?? DEFAULT_CAPTURE);
      return new WholeBuffer(whole.limitBytes, () => {
        // Never a cut: the output is dropped and the process stopped, and the caller is told.
        if (overflow !== undefined) return;
        overflow = stream;
        terminate();
      });
    };
    const out = capture('stdout');
    const err = capture('stderr');
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
        cutBytes: { stdout: 0, stderr: 0 },
      });
      return;
    }

    const child = startProcess(command, args, {
      cwd: options.cwd,
      env: { ...options.env },
      // Its own process group, so the whole tree can be killed at once.
      detached: true,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      windowsHide: true,
      ...(options.runAs === undefined ? {} : { uid: options.runAs.uid, gid: options.runAs.gid }),
    });
    const kill = (sig: NodeJS.Signals): void => {
      if (options.kill !== undefined) options.kill(sig);
      // No pid yet: a child being started elsewhere (starter.ts) is signalled once it runs.
      else if (child.pid === undefined) child.kill(sig);
      else killGroup(child.pid, sig);
    };

    const terminate = (): void => {
      if (child.pid !== undefined && exitCode === null && exitSignal === null) {
        options.beforeKill?.(child.pid);
      }
      kill('SIGTERM');
      const t = setTimeout(() => {
        kill('SIGKILL');
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
      const stdoutBytes =
        options.wholeOutput?.bytes === true && out instanceof WholeBuffer ? out.bytes() : undefined;
      const stdout = stdoutBytes === undefined ? out.text() : stdoutBytes.toString('utf8');
      const stderr = err.text();
      const result: ProcessResult = {
        exitCode,
        signal: exitSignal,
        timedOut,
        aborted,
        stdout,
        stderr,
        durationMs: Math.round(performance.now() - started),
        cutBytes: { stdout: out.cut, stderr: err.cut },
      };
      if (stdoutBytes !== undefined) result.stdoutBytes = stdoutBytes;
      if (overflow) result.overflow = overflow;
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
      kill('SIGTERM');
      const t = setTimeout(() => {
        kill('SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, KILL_GRACE_MS);
      t.unref();
      timers.push(t);
    });

    child.on('close', () => finish());
  });
}

/** The first executable `name` on `env`'s PATH, or null. */
export function which(name: string, env: Readonly<Record<string, string>>): string | null {
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

/** The argv that runs a command line: `bash -c` (or `sh -c` when bash is missing). */
export function shellArgv(command: string, env: Readonly<Record<string, string>>): string[] {
  const bash = which('bash', env);
  // --norc: node's stdin is a socket, and `bash -c` with a socket on stdin
  // believes it was started by rshd/sshd and would source ~/.bashrc.
  if (bash) return [bash, '--norc', '-c', command];
  return [which('sh', env) ?? '/bin/sh', '-c', command];
}

/** Runs a command line with `bash -c` (or `sh -c` when bash is missing), for gates and setup. */
export function runShell(command: string, options: RunProcessOptions): Promise<ProcessResult> {
  return runProcess(shellArgv(command, options.env), options);
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
