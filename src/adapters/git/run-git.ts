/**
 * The one way epicflow runs git: hooks, signing, pagers, fsmonitor and
 * background maintenance are all disabled per command, so nothing an agent
 * plants in the repository (a hook, a pager, an fsmonitor command) runs with
 * epicflow's rights, and no prompt can ever block a run. What `-c` cannot
 * switch off (filters, merge drivers, proxies planted in `.git/config`) is put
 * back by the `GitConfigGuard` each runner checks before a command.
 *
 * Configuration from outside the repository has no say either: the system
 * config and the system attributes are switched off, and git's global config
 * is `/dev/null`, so `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config` and
 * `/etc/gitconfig` (aliases, `url.<x>.insteadOf`, `core.fsmonitor`,
 * `credential.helper`, includes) are never read; the global ignore and
 * attributes files are `/dev/null` too. What epicflow wants there instead is
 * `PRIVATE_GLOBAL_CONFIG`.
 *
 * Output is read whole, never cut (`GIT_OUTPUT_LIMIT`).
 */
import { EpicflowError } from '../../core/errors.js';
import { formatBytes } from '../../core/cut-notice.js';
import { baseEnv, runProcess, type ProcessResult } from '../process/run-process.js';

export interface GitIdentity {
  readonly name: string;
  readonly email: string;
}

/**
 * Which repository a command works on, named explicitly: git never discovers it
 * from the working directory, so a `.git` an agent planted, renamed or replaced
 * in a tree it wrote has no say in epicflow's own commands.
 */
export interface GitLocation {
  /** The git directory: the common one for the main tree, a linked tree's own admin folder. */
  readonly gitDir: string;
  /** The work tree; absent for commands that need none. */
  readonly workTree?: string;
  /**
   * The tree is handed to another user and taken back (adapters/process/untrusted.ts):
   * every file's change time moved with its owner, so git compares files by what the
   * taking back keeps true (modification time, size, inode, owner) instead of re-reading
   * all of them; the taking back gives every file the step changed a new modification
   * time, whatever the step set it to.
   */
  readonly handedOver?: boolean;
}

/** A tree's location: its work tree always named. */
export type TreeLocation = GitLocation & { readonly workTree: string };

interface RunGitOptions {
  /** Written to stdin: text, or bytes (blobs). */
  readonly input?: string | Uint8Array;
  /** Treat every pathspec literally (no globs, no magic). */
  readonly literalPathspecs?: boolean;
  /** An index of epicflow's own (absolute path) instead of the tree's (`GIT_INDEX_FILE`). */
  readonly indexFile?: string;
  /** Keep stdout byte for byte too (`ProcessResult.stdoutBytes`): blobs that are not text. */
  readonly bytes?: boolean;
  /** The argv git runs through (a fresh tree written as its agent: `TreeWriter`). */
  readonly through?: (argv: readonly string[]) => string[];
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
  // The graft file is switched off (GIT_GRAFT_FILE below); git would otherwise explain
  // its deprecation in sixteen lines above every error epicflow shows.
  'advice.graftFileDeprecated=false',
  // Output we parse must look the same whatever the user's global config says.
  'color.ui=false',
  'log.showSignature=false',
  'core.quotePath=false',
  // Their defaults live in the home folder ($XDG_CONFIG_HOME/git/ignore and
  // /attributes), read even without a global config: an ignore rule there would
  // hide a file from `add -A` (and the perimeter), an attribute would run a filter.
  'core.excludesFile=/dev/null',
  'core.attributesFile=/dev/null',
  // A repository the agent nests in its tree has a config of its own (a filter, an
  // fsmonitor): git never enters one — no recursion, no submodule status or summary.
  'submodule.recurse=false',
  'diff.ignoreSubmodules=all',
  'status.submoduleSummary=false',
  'fetch.recurseSubmodules=false',
];

/**
 * What epicflow's git reads in place of a global config: one `key=value` per
 * entry, e.g. `'safe.directory=/path/of/a/tree'` (a multi-valued key may
 * appear more than once). They are given as `-c` options (git's command scope,
 * which, like the global scope, is protected configuration and wins over the
 * repository's), not written to a file: an agent runs as the same user and
 * could edit any file epicflow writes while it runs; `/dev/null` and argv
 * cannot be edited.
 */
const PRIVATE_GLOBAL_CONFIG: readonly string[] = [
  // Trees are handed to the untrusted user while it runs (see adapters/process/untrusted.ts):
  // git's ownership check would refuse them. What that check protects against (a hostile
  // `.git/config`, a redirected `.git` file) is what GitConfigGuard puts back first.
  'safe.directory=*',
];

/**
 * The most one git command may write to either stream. Every byte below it is
 * read; past it the command is stopped and fails (`git`), it is never cut. Far
 * above real repositories: `ls-tree -r` of 100,000 files is about 6 MB.
 */
const GIT_OUTPUT_LIMIT = 256 * 1024 * 1024;

const GIT_TIMEOUT_MS = 30 * 60 * 1000;

/**
 * The environment of every git command epicflow runs: the base environment
 * (no GIT_* variable of the caller's, no token), no prompt, no pager, and no
 * configuration from outside the repository (see the module comment).
 */
function gitEnv(): Record<string, string> {
  return {
    ...baseEnv(process.env),
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    // Replace refs and a graft file (both writable by an agent that can write `.git`)
    // would make git read one commit while another is merged and pushed.
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_GRAFT_FILE: '/dev/null',
  };
}

/** Builds the full argv of a git command, with the safe configuration and identity. */
function gitArgv(
  args: readonly string[],
  identity: GitIdentity | undefined,
  options: RunGitOptions & { readonly location?: GitLocation | undefined } = {},
): string[] {
  const argv = ['git'];
  for (const c of [...SAFE_CONFIG, ...PRIVATE_GLOBAL_CONFIG]) argv.push('-c', c);
  if (identity) argv.push('-c', `user.name=${identity.name}`, '-c', `user.email=${identity.email}`);
  if (options.location !== undefined) {
    argv.push(`--git-dir=${options.location.gitDir}`);
    if (options.location.handedOver === true) argv.push('-c', 'core.trustCtime=false');
    if (options.location.workTree !== undefined) {
      argv.push(`--work-tree=${options.location.workTree}`);
    }
  }
  if (options.literalPathspecs) argv.push('--literal-pathspecs');
  argv.push(...args);
  return argv;
}

interface SpawnGitOptions extends RunGitOptions {
  readonly cwd: string;
  /** The repository, named explicitly (see `GitLocation`); unset: discovered from `cwd`. */
  readonly location?: GitLocation | undefined;
  readonly identity: GitIdentity | undefined;
  readonly timeoutMs?: number;
  /** Added to `gitEnv()` (the network commands' credential header). */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** Defaults to `GIT_OUTPUT_LIMIT`; smaller only to prove the limit. */
  readonly outputLimitBytes?: number;
}

/**
 * Runs one git command the way epicflow runs all of them: `gitArgv`, `gitEnv`,
 * both streams read whole. Returns the result whatever the exit code; a git
 * that cannot start, or output past the limit, throws `EpicflowError('git')`.
 */
export async function spawnGit(
  args: readonly string[],
  options: SpawnGitOptions,
): Promise<ProcessResult> {
  const limit = options.outputLimitBytes ?? GIT_OUTPUT_LIMIT;
  const runOptions: Parameters<typeof runProcess>[1] = {
    cwd: options.cwd,
    env: {
      ...gitEnv(),
      ...options.extraEnv,
      ...(options.indexFile === undefined ? {} : { GIT_INDEX_FILE: options.indexFile }),
    },
    timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS,
    wholeOutput: { limitBytes: limit, ...(options.bytes === true ? { bytes: true } : {}) },
  };
  if (options.input !== undefined) runOptions.input = options.input;
  const argv = gitArgv(args, options.identity, options);
  const result = await runProcess(options.through?.(argv) ?? argv, runOptions);
  if (result.spawnError) {
    throw new EpicflowError(
      'git',
      `cannot run git in ${options.cwd}: ${result.spawnError.message}`,
    );
  }
  if (result.overflow) {
    throw new EpicflowError(
      'git',
      `git ${args[0] ?? ''} in ${options.cwd} wrote more than ${formatBytes(limit)} to ${result.overflow}`,
      {
        details: [
          'epicflow reads git output whole and never cuts it; the command was stopped',
          `command: git ${args.join(' ').slice(0, 200)}`,
        ],
      },
    );
  }
  return result;
}

/**
 * The identity configured for `cwd` as the person running epicflow set it up
 * (the repository's config, then their global and system config), for commits
 * when no identity is given. The one read of configuration from outside the
 * repository: two values, nothing run. Empty strings when unset.
 */
export async function readConfiguredIdentity(
  cwd: string,
): Promise<{ name: string; email: string }> {
  const env = gitEnv();
  delete env.GIT_CONFIG_NOSYSTEM;
  delete env.GIT_CONFIG_GLOBAL;
  // One git for both: `key\nvalue` entries ended by NUL, in the order git reads them, so the
  // last one of a key is the one `--get` would give.
  const r = await runProcess(
    gitArgv(['config', '-z', '--get-regexp', '^user\\.(name|email)$'], undefined),
    { cwd, env, timeoutMs: 60_000, wholeOutput: { limitBytes: 64 * 1024 } },
  );
  const found = new Map<string, string>();
  if (r.exitCode === 0 && r.overflow === undefined) {
    for (const entry of r.stdout.split('\0')) {
      if (entry === '') continue;
      const newline = entry.indexOf('\n');
      found.set(
        newline === -1 ? entry : entry.slice(0, newline),
        newline === -1 ? '' : entry.slice(newline + 1).trim(),
      );
    }
  }
  return { name: found.get('user.name') ?? '', email: found.get('user.email') ?? '' };
}

/** The last lines of a process's output, for error details. */
function outputTail(result: ProcessResult, lines = 20): string[] {
  const text = (result.stderr.trim() || result.stdout.trim()).split('\n');
  return text.slice(-lines).filter((l) => l.trim() !== '');
}

/** Checked before every command (see `GitConfigGuard`); told after each one ran. */
interface GitCommandGuard {
  check(): Promise<void>;
  /** After a command of epicflow's: what it wrote is trusted. */
  settle?(): void;
}

export class GitRunner {
  constructor(
    readonly cwd: string,
    readonly identity: GitIdentity | undefined,
    private readonly guard?: GitCommandGuard,
    /** The repository every command names; unset only to discover it (`Git.open`). */
    readonly location?: GitLocation,
  ) {}

  /**
   * Runs git; returns the result whatever the exit code (a missing git binary,
   * or output past `GIT_OUTPUT_LIMIT`, throws).
   */
  async try(args: readonly string[], options: RunGitOptions = {}): Promise<ProcessResult> {
    // Git's own configuration must be as trusted before git reads it.
    await this.guard?.check();
    try {
      return await spawnGit(args, {
        ...options,
        cwd: this.cwd,
        identity: this.identity,
        location: this.location,
      });
    } finally {
      this.guard?.settle?.();
    }
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
