import { describeError, isEpicflowError } from '../core/errors.js';

/**
 * What a command needs from the outside world. `main.ts` passes the process's
 * own; tests pass in-memory ones, so every command runs in-process.
 */
export interface CliIo {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
  readonly readStdin: () => Promise<string>;
  /** Relative paths given on the command line are resolved against this. */
  readonly cwd: string;
  /** Standard output is a terminal (enables the live board of `run`). */
  readonly isTTY?: boolean;
  /** The environment commands read (`GITHUB_TOKEN` for `init`); default: the process's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface CliContext {
  readonly io: CliIo;
  /** Sets the exit code `main` returns once the command finishes. */
  readonly setExitCode: (code: number) => void;
}

/** Exit codes shared by all commands. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/**
 * The one mapping of a failure to an exit code: bad input (usage, config, plan) and an
 * environment that cannot run untrusted code safely (isolation) are the caller's to fix
 * (2); anything else is a failed run (1).
 */
function exitCodeFor(e: unknown): number {
  if (!isEpicflowError(e)) return EXIT_FAILED;
  switch (e.tag) {
    case 'usage':
    case 'config':
    case 'plan':
    case 'isolation':
      return EXIT_USAGE;
    default:
      return EXIT_FAILED;
  }
}

/**
 * The one rendering of a command's failure: `error: ` and the error, on stderr; its exit
 * code. `main` gives every command's error to it: commands let their errors through.
 */
export function renderFailure(io: Pick<CliIo, 'stderr'>, e: unknown): number {
  io.stderr(`error: ${describeError(e)}\n`);
  return exitCodeFor(e);
}
