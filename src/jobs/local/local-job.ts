/**
 * The local job shell: what `epicflow run`, `land`, `plan draft`, `plan refine`, `plan
 * approve` and `retro` share on one machine. Each command is a kind, one object
 * (`LocalKind`: `prepare`, whose checks refuse before anything is created, then `run`);
 * `runLocalKind` opens the job (the repository, `--repo`), runs the kind, and closes the
 * job one way whatever it did, last opened first: scratch trees taken back from the
 * untrusted user and removed, the events written, the epic's lock released. The job gives
 * each kind the same pieces: the config, the epic's folders (the local registry,
 * `local-epics.ts`), its state store under the lock, who untrusted code runs as, the event
 * log and landing's git port. The kinds that run an epic's engine (`run`, `land`) have one
 * shell more over this one (`epic-kind.ts`): the epic's ports and settings are
 * `composeEpic`'s (`composition/epic.ts`).
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Git } from '../../adapters/git/index.js';
import { landGitPort } from '../../adapters/git/port.js';
import type { Untrusted } from '../../adapters/process/untrusted.js';
import { FileStateStore, writeFileAtomic } from '../../adapters/state/file-store.js';
import type { AgentUserFlag } from '../../core/agent-user.js';
import { EpicflowError } from '../../core/errors.js';
import type { EngineEvent, LandGitPort } from '../../engine/ports.js';
import { loadLocalConfig, openRepo, readInputFile, type LocalConfig } from './local-config.js';
import { epicFolders, epicsRoot, pickEpic, type EpicFolders } from './local-epics.js';
import { localUntrusted } from './local-untrusted.js';
import { reclaimingLandTrees } from '../../composition/reclaiming-trees.js';

/** What every local command is given by its entry. */
export interface LocalHooks {
  /** Where relative paths are resolved. */
  readonly cwd: string;
  /** The environment executors' `${VAR}` come from and children start from. */
  readonly env: NodeJS.ProcessEnv;
  /** Said once (who untrusted code runs as, the start's warnings). */
  readonly onWarning?: ((line: string) => void) | undefined;
  /** Aborted on SIGINT/SIGTERM. */
  readonly interrupt?: AbortSignal | undefined;
}

/** What every local command that works on an epic is given on its command line. */
export interface LocalJobOptions {
  /** `--repo DIR` (default: the current directory). */
  readonly repo?: string | undefined;
  /** `--config FILE` (default: the repository's). */
  readonly config?: string | undefined;
  /** `--epic ID`. */
  readonly epic?: string | undefined;
  /** `--agent-user`: who untrusted code runs as (see core/agent-user.ts). */
  readonly agentUser?: AgentUserFlag;
  /** `--no-sandbox` (false): untrusted code runs without the kernel sandbox. Default: with it. */
  readonly sandbox?: boolean | undefined;
}

/** One local command while it runs; closed by `localJob` only. */
export class LocalJob {
  private readonly closing: (() => Promise<void>)[] = [];
  private runAs: Untrusted | undefined;

  constructor(
    readonly repo: Git,
    readonly hooks: LocalHooks,
  ) {}

  /** A path the user gave, resolved where the command was started. */
  path(given: string): string {
    return resolve(this.hooks.cwd, given);
  }

  /** A plan or epic file named on the command line: its absolute path and text. */
  async input(given: string, what: 'plan' | 'epic'): Promise<{ path: string; text: string }> {
    const path = this.path(given);
    return { path, text: await readInputFile(path, given, what) };
  }

  /** The config (`--config FILE`, else the repository's), checked (see `loadLocalConfig`). */
  config(
    given: string | undefined,
    how: Pick<Parameters<typeof loadLocalConfig>[0], 'deferEnv' | 'role'> = {},
  ): Promise<LocalConfig> {
    return loadLocalConfig({
      root: this.repo.root,
      config: given,
      cwd: this.hooks.cwd,
      env: this.hooks.env,
      ...how,
    });
  }

  /** The folders of `epic` (`worktrees`: `--worktrees DIR` as given). */
  folders(epic: string, worktrees?: string): EpicFolders {
    return epicFolders(this.repo, epic, worktrees === undefined ? undefined : this.path(worktrees));
  }

  /** `--epic ID`, or the only epic that ran here (a usage error otherwise), and its folders. */
  async chosenEpic(given: string | undefined): Promise<EpicFolders> {
    return this.folders(await pickEpic(this.repo, given));
  }

  /**
   * Who untrusted code runs as (`--agent-user`), chosen and said once, before anything is
   * created: an epic's folders, or a planning job's (its scratch as `worktrees`).
   */
  async untrusted(
    flags: Pick<LocalJobOptions, 'agentUser' | 'sandbox'>,
    folders: Pick<EpicFolders, 'worktrees' | 'agentHome'>,
  ): Promise<Untrusted> {
    this.runAs = await localUntrusted(
      flags,
      // epicflow's own folders: the state (homes among it) and the worktrees.
      {
        roots: [epicsRoot(this.repo), folders.worktrees],
        home: folders.agentHome,
        gitDir: this.repo.gitDir,
      },
      this.hooks,
    );
    return this.runAs;
  }

  /** The epic's state store, its exclusive lock held until the job closes. */
  async lock(folders: EpicFolders): Promise<FileStateStore> {
    const store = new FileStateStore(folders.state);
    const unlock = await store.lock();
    this.closing.push(unlock);
    return store;
  }

  /**
   * Each event to `onEvent` and appended to the store's `events.jsonl`, in order, all
   * written at close. An append that fails (a link planted at `events.jsonl`) fails the
   * close with its error, once; the run's own work is not stopped by it.
   */
  eventLog(store: FileStateStore, onEvent: (event: EngineEvent) => void): (e: EngineEvent) => void {
    let appending: Promise<void> = Promise.resolve();
    let failure: { readonly error: unknown } | undefined;
    this.closing.push(async () => {
      await appending;
      if (failure !== undefined) throw failure.error;
    });
    return (event) => {
      onEvent(event);
      appending = appending
        .then(() => (failure === undefined ? store.appendEvent(event) : undefined))
        .catch((e: unknown) => {
          failure ??= { error: e };
        });
    };
  }

  /** A fresh scratch folder `<parent>/<prefix><8 hex>`, taken back and removed at close. */
  scratch(parent: string, prefix = ''): string {
    const dir = join(parent, `${prefix}${randomUUID().slice(0, 8)}`);
    this.closing.push(async () => {
      if (this.runAs?.isolated === true) await this.runAs.discard([dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    });
    return dir;
  }

  /** A step of the close (after the recipe, before what was opened earlier is closed). */
  onClose(step: () => Promise<void>): void {
    this.closing.push(step);
  }

  /** Landing's git port over the repository, its trees taken back from untrusted code first. */
  landGitPort(): LandGitPort {
    return reclaimingLandTrees(landGitPort(this.repo, this.runAs?.writer), this.runAs);
  }

  /** Every close step, last opened first; the first failure is thrown once all ran. */
  async close(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const step of this.closing.splice(0).reverse()) {
      try {
        await step();
      } catch (e) {
        failure ??= { error: e };
      }
    }
    if (failure !== undefined) throw failure.error;
  }
}

/** Opens a local job in the repository (`--repo DIR`, else the current one), runs `recipe`, closes it. */
export async function localJob<T>(
  hooks: LocalHooks,
  repo: string | undefined,
  recipe: (job: LocalJob) => Promise<T>,
): Promise<T> {
  const job = new LocalJob(await openRepo(resolve(hooks.cwd, repo ?? '.')), hooks);
  try {
    return await recipe(job);
  } finally {
    await job.close();
  }
}

/**
 * One local command's kind as one object: `prepare` makes every check that can refuse (an
 * `EpicflowError`) before anything is created, `run` does the work. `runLocalKind` opens
 * the job, runs the two, and closes it; the kinds that run an epic's engine have a shell
 * of their own over this one (`epic-kind.ts`).
 */
export interface LocalKind<
  Options extends Pick<LocalJobOptions, 'repo'>,
  Hooks extends LocalHooks,
  Prepared,
  Result,
> {
  prepare(job: LocalJob, options: Options, hooks: Hooks): Promise<Prepared>;
  run(job: LocalJob, prepared: Prepared, options: Options, hooks: Hooks): Promise<Result>;
}

/** Runs `kind` in a local job in the repository (`--repo DIR`, else the current one). */
export function runLocalKind<
  Options extends Pick<LocalJobOptions, 'repo'>,
  Hooks extends LocalHooks,
  Prepared,
  Result,
>(
  kind: LocalKind<Options, Hooks, Prepared, Result>,
  options: Options,
  hooks: Hooks,
): Promise<Result> {
  return localJob(hooks, options.repo, async (job) =>
    kind.run(job, await kind.prepare(job, options, hooks), options, hooks),
  );
}

/** The markdown's first `# heading`, for titles. */
export function headingOf(markdown: string): string | undefined {
  return /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim();
}

/** Writes through a temporary file and a rename: the file is whole or untouched. */
export async function writeWhole(path: string, text: string): Promise<void> {
  try {
    await writeFileAtomic(path, text);
  } catch (e) {
    throw new EpicflowError('usage', `cannot write ${path}: ${(e as Error).message}`, { cause: e });
  }
}
