/**
 * The one way epicflow runs git: hooks, signing, pagers, fsmonitor and
 * background maintenance are all disabled per command, so nothing an agent
 * plants in the repository (a hook, a pager, an fsmonitor command) runs with
 * epicflow's rights, and no prompt can ever block a run. What `-c` cannot
 * switch off (filters, merge drivers, proxies planted in `.git/config`) is put
 * back by the `GitConfigGuard` each runner checks before a command.
 */
import { EpicflowError } from '../../core/errors.js';
import { baseEnv, runProcess, type ProcessResult } from '../process/run-process.js';

export interface GitIdentity {
  readonly name: string;
  readonly email: string;
}

export interface RunGitOptions {
  readonly input?: string;
  /** Treat every pathspec literally (no globs, no magic). */
  readonly literalPathspecs?: boolean;
}

/** Options placed before every git subcommand. */
const SAFE_CONFIG = [
  'core.hooksPath=/dev/null',
  'commit.gpgsign=false',
  'tag.gpgsign=false',
  'core.autocrlf=false',
  'core.fsmonitor=false',
  'core.pager=cat',
  'gc.auto=0',
  'maintenance.auto=false',
  'rerere.enabled=false',
  'merge.log=false',
  'advice.detachedHead=false',
  // Output we parse must look the same whatever the user's global config says.
  'color.ui=false',
  'log.showSignature=false',
  'core.quotePath=false',
];

const GIT_TIMEOUT_MS = 30 * 60 * 1000;

export function gitEnv(): Record<string, string> {
  return {
    ...baseEnv(process.env),
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_OPTIONAL_LOCKS: '0',
  };
}

/** Builds the full argv of a git command, with the safe configuration and identity. */
export function gitArgv(
  args: readonly string[],
  identity: GitIdentity | undefined,
  options: RunGitOptions = {},
): string[] {
  const argv = ['git'];
  for (const c of SAFE_CONFIG) argv.push('-c', c);
  if (identity) argv.push('-c', `user.name=${identity.name}`, '-c', `user.email=${identity.email}`);
  if (options.literalPathspecs) argv.push('--literal-pathspecs');
  argv.push(...args);
  return argv;
}

/** The last lines of a process's output, for error details. */
export function outputTail(result: ProcessResult, lines = 20): string[] {
  const text = (result.stderr.trim() || result.stdout.trim()).split('\n');
  return text.slice(-lines).filter((l) => l.trim() !== '');
}

/** Checked before every command: see `GitConfigGuard`. */
export interface GitCommandGuard {
  check(): Promise<void>;
}

export class GitRunner {
  constructor(
    readonly cwd: string,
    readonly identity: GitIdentity | undefined,
    private readonly guard?: GitCommandGuard,
  ) {}

  /** Runs git; returns the result whatever the exit code (a missing git binary throws). */
  async try(args: readonly string[], options: RunGitOptions = {}): Promise<ProcessResult> {
    // Git's own configuration must be as trusted before git reads it.
    await this.guard?.check();
    const runOptions: Parameters<typeof runProcess>[1] = {
      cwd: this.cwd,
      env: gitEnv(),
      timeoutMs: GIT_TIMEOUT_MS,
    };
    if (options.input !== undefined) runOptions.input = options.input;
    const result = await runProcess(gitArgv(args, this.identity, options), runOptions);
    if (result.spawnError) {
      throw new EpicflowError('git', `cannot run git in ${this.cwd}: ${result.spawnError.message}`);
    }
    return result;
  }

  /** Runs git and returns stdout; a non-zero exit throws `EpicflowError('git', what)`. */
  async run(what: string, args: readonly string[], options: RunGitOptions = {}): Promise<string> {
    const result = await this.try(args, options);
    if (result.exitCode !== 0) throw gitError(what, result);
    return result.stdout;
  }
}

export function gitError(what: string, result: ProcessResult): EpicflowError {
  const details = outputTail(result);
  if (result.timedOut) details.push('(git timed out)');
  return new EpicflowError('git', what, { details });
}
