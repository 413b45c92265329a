/**
 * The narrow interfaces the use cases need. The local run wires them to git
 * worktrees, files and child processes (`local.ts`); the Action can wire the
 * same lifecycle to a job checkout and a remote epic branch.
 */
import type { ExecutorConfig } from '../core/config/types.js';
import type { ExecutorPort } from '../core/executor.js';
import type { GateRun } from '../core/gates/index.js';
import type { StoryRecord } from '../core/model.js';
import type { PerimeterChange } from '../core/perimeter/index.js';
import type { TreeFile } from '../core/prompt/index.js';

export type MergeResult = { ok: true; sha: string } | { ok: false; conflicts: string[] };

/**
 * The files that configure git for a tree's repository (`.git/config`,
 * `config.worktree`, `info/attributes`, `info/exclude`, the worktree's `.git`
 * file), trusted as they were before untrusted code ran. Opaque to the engine.
 */
export interface GitConfigSnapshot {
  /** Labels of the guarded files, e.g. `.git/config`. */
  readonly files: readonly string[];
}

/** Told the folders of the repositories nested in a tree that a commit left out. */
export type LeftOut = (folders: readonly string[]) => Promise<void>;

/** One checked-out tree: a story's worktree or the epic's integration tree. */
export interface WorktreePort {
  readonly path: string;
  head(): Promise<string>;
  /**
   * Commits the files as they are but what was set aside (read by epicflow without
   * following links; no git command reads the tree); null when nothing changed. A
   * repository nested in the tree is left out, and `leftOut` told its folders.
   */
  commitAll(message: string, leftOut?: LeftOut): Promise<string | null>;
  /**
   * The uncommitted changes as they are now (what setup left) are not the story's:
   * commits leave each such path out while it holds what it holds now. Their paths.
   */
  setAsideChanges(): Promise<string[]>;
  /** Merges the epic head in; conflicting hunks take the epic side. */
  catchUp(epicSha: string): Promise<{ merged: boolean; conflictsResolvedForEpic: string[] }>;
  /** Committed changes of `head` (default HEAD) against its merge base with `baseRef`. */
  changedPaths(baseRef: string, head?: string): Promise<PerimeterChange[]>;
  /** Puts paths back as in `fromRef` (absent there → deleted). */
  restorePaths(fromRef: string, paths: readonly string[]): Promise<void>;
  /** Merges a commit (by sha) or a branch with `--no-ff`. */
  mergeNoFf(commit: string, message: string): Promise<MergeResult>;
  /** Merges a commit with `--no-ff`, every conflict settled as HEAD has it; the merge commit. */
  mergeKeepingOurs(commit: string, message: string): Promise<string>;
  /** HEAD, index and tree to `sha`; untracked files removed. */
  resetHard(sha: string): Promise<void>;
  isClean(): Promise<boolean>;
  /** Paths with uncommitted changes, and untracked files that are not ignored. */
  dirtyPaths(): Promise<string[]>;
  /**
   * Before an agent (or code it wrote) runs in this tree: trusts git's own
   * configuration files as they are. Until the restore, every git command of the
   * repository checks them first (stories run in parallel).
   */
  snapshotGitConfig(): Promise<GitConfigSnapshot>;
  /** After it ran: puts back, byte for byte, whatever of them changed; returns their labels. */
  restoreGitConfig(snapshot: GitConfigSnapshot): Promise<string[]>;
}

/** The repository: refs, branches and worktrees, never the user's checkout. */
export interface GitPort {
  /** Top level of the user's work tree. */
  readonly root: string;
  /** The common git directory (absolute). */
  readonly gitDir: string;
  revParse(ref: string): Promise<string | null>;
  /** HEAD of the user's checkout. */
  defaultBase(): Promise<string>;
  createBranch(name: string, sha: string): Promise<void>;
  deleteBranch(name: string): Promise<void>;
  /** Compare-and-swap; false when the ref was not at `expectedOldSha`. */
  updateRef(ref: string, newSha: string, expectedOldSha: string | null): Promise<boolean>;
  /** A worktree with `branch` checked out at `path` (re-used when already there). */
  addWorktree(path: string, branch: string): Promise<WorktreePort>;
  /** A worktree at `path` with a detached HEAD at `sha` (re-used and reset when already there). */
  detachedWorktree(path: string, sha: string): Promise<WorktreePort>;
  removeWorktree(path: string): Promise<void>;
  /** Unified diff of `head` against its merge base with `base`. */
  diff(base: string, head: string): Promise<string>;
  /** Whether two commits this process wrote hold the same tree; undefined when not known. */
  sameTree(a: string, b: string): boolean | undefined;
  /** Every entry of a commit's tree with its mode, object id and size (from git's objects). */
  treeFiles(commit: string): Promise<TreeFile[]>;
  /** Blobs by object id, byte for byte; an id that names no blob is absent. */
  readBlobs(objects: readonly string[]): Promise<Map<string, Uint8Array>>;
  /** Story id → merge commit, from `Epicflow-Story` trailers on the epic branch. */
  mergedStories(epicBranch: string): Promise<Map<string, string>>;
}

/**
 * What setup made on fresh checkouts, kept by key (engine/setup-cache.ts): out of every
 * agent's reach, written only from a checkout epicflow made of a commit.
 */
export interface SetupCachePort {
  /** Copies the files kept under `key` into the tree (never over what is there); false: none kept. */
  restore(key: string, tree: string): Promise<boolean>;
  /**
   * Keeps the files of the tree that `tracked` (the commit's paths) does not list, under
   * `key`, links as links.
   */
  store(key: string, tree: string, tracked: ReadonlySet<string>): Promise<void>;
}

/** Durable records of one epic; every write atomic. */
export interface StateStore {
  readonly dir: string;
  readStory(id: string): Promise<StoryRecord | null>;
  writeStory(record: StoryRecord): Promise<void>;
  listStories(): Promise<StoryRecord[]>;
  readJson<T>(name: string): Promise<T | null>;
  writeJson(name: string, value: unknown): Promise<void>;
  /** Writes a text file and returns its path. */
  writeText(name: string, text: string): Promise<string>;
}

/** Shell commands for setup and gates, run in a tree with a wall-clock timeout. */
export interface GateRunner {
  run(
    command: string,
    options: {
      /** The checkout the command runs in, and may write. */
      cwd: string;
      /**
       * A package's folder in it (`packages/api`), where the command starts; `.` or none:
       * the checkout's top. The checkout is what is handed to the command, whole.
       */
      dir?: string;
      timeoutMs: number;
      signal?: AbortSignal;
      /** Every line of the output as it streams (both streams), for the story's log. */
      onLine?: (line: string) => void;
      /** The story whose checks these are (a role of its own: never its judge's user). */
      story?: string;
    },
  ): Promise<GateRun>;
}

/** The executor port for a configured executor (by harness). */
export type ExecutorLookup = (executor: ExecutorConfig) => ExecutorPort;

export interface Clock {
  now(): Date;
}

/**
 * The clock of a run of stories: the time, and the waits before a retry (a backoff),
 * which an interrupt cuts short. Tests pass one that does not wait.
 */
export interface RunClock extends Clock {
  /** Resolves after `ms`, or at once when `signal` is aborted (never rejects). */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export type EngineEventKind = 'epic' | 'story' | 'summary' | 'status' | 'halt';

/** One line for people (a lane per story) and one entry of `events.jsonl`. */
export interface EngineEvent {
  readonly at: string;
  readonly kind: EngineEventKind;
  readonly story?: string;
  /** The executor holding the story's coder when the event was published, if one does. */
  readonly executor?: string;
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

export interface EventSink {
  emit(event: EngineEvent): void;
}

/**
 * Named points of the lifecycle where a test may crash the process to prove
 * that a rerun recovers. Entries pass a hook; the engine only names the points.
 */
export const CRASH_POINTS = [
  'after-branch',
  'after-setup',
  'mid-coder',
  'after-commit',
  'after-task',
  'mid-gates',
  'after-restore',
  'mid-merge',
  'after-merge',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/**
 * A tree in which a branch is brought into the epic (`land`): the merge is
 * started there, a coder resolves it, and every state is written as a commit
 * of its own, so what is checked is a commit and no branch moves with the tree.
 */
export interface LandTreePort extends WorktreePort {
  /** Starts merging `commit` into HEAD without committing; conflicting files keep git's markers. */
  mergeNoCommit(commit: string): Promise<string[]>;
  /** A commit of the files as they are with `parents` (as `commitAll` reads them); HEAD does not move. */
  snapshotCommit(parents: readonly string[], message: string, leftOut?: LeftOut): Promise<string>;
  /** Detached HEAD, index and tree at `sha` (untracked files removed); no branch moves. */
  detachAt(sha: string): Promise<void>;
  /** The tree's path with every symlink resolved, as the processes running in it see it. */
  realPath(): Promise<string>;
}

/** What landing needs of the repository besides the git port. */
export interface LandGitPort extends GitPort {
  isAncestor(ancestor: string, descendant: string): Promise<boolean>;
  /** A commit of `ofCommit`'s tree with `parents` and `message`; no ref moves. */
  commitTree(ofCommit: string, parents: readonly string[], message: string): Promise<string>;
  /** The text of a file in a commit; null when there is none. */
  readBlob(commit: string, path: string): Promise<string | null>;
  /** Every file of a commit, repository-relative. */
  listFiles(commit: string): Promise<string[]>;
  /** A land tree at `path` with a detached HEAD at `sha` (re-used and put there when it exists). */
  landTree(path: string, sha: string): Promise<LandTreePort>;
}

/** A span of the run's trace (see engine/trace.ts). */
export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

export interface TraceSpan {
  /** A span inside this one, started now. */
  child(name: string, attributes?: TraceAttributes): TraceSpan;
  set(attributes: TraceAttributes): void;
  /** Ends the span; `failure` marks it as an error with that message. */
  end(failure?: string): void;
}
