/**
 * What every use case of one epic run shares: the plan and config, the ports,
 * the roster, the epic's integration tree and where epicflow left the epic
 * branch. Mutable parts (epic head, roster state, halt) live here, in one place.
 */
import type { TraceSpan } from './trace.js';
import { createHash } from 'node:crypto';
import type { EpicflowConfig } from '../core/config/types.js';
import { combinedBaseline, type GateRun } from '../core/gates/index.js';
import type { Halt, Plan, Story } from '../core/model.js';
import { epicScope, storyScope, type CheckScope, type ScopedCommand } from '../core/packages.js';
import { redOnBaseNote } from '../core/story/index.js';
import { fromCommit } from './checkout.js';
import { Mutex } from './mutex.js';
import { setupFromCache } from './setup-cache.js';
import type {
  CrashPoint,
  RunClock,
  EngineEventKind,
  SetupCachePort,
  EventSink,
  ExecutorLookup,
  GateRunner,
  GitPort,
  StateStore,
  WorktreePort,
} from './ports.js';
import type { HealthProbe, RosterHolder } from './roster-holder.js';

/** The checkout of an epic head its baseline gates run in (`<worktrees>/_base`). */
const BASE_TREE = '_base';

/** Where the whole output of a command goes, line by line (a story's log). */
export interface OutputLog {
  line(text: string): void;
}

export interface EpicPorts {
  readonly git: GitPort;
  readonly state: StateStore;
  readonly gates: GateRunner;
  readonly executors: ExecutorLookup;
  readonly clock: RunClock;
  readonly events: EventSink;
  /**
   * Where each story's logs (setup, gates, agent turns) are kept, and named in failure
   * reasons: the state folder of a local run, a folder a job uploads as its artifact.
   * None: no logs are kept.
   */
  readonly logs?:
    | (Pick<StateStore, 'writeText'> & {
        /** Appends to a text file (the live log `epicflow logs --follow` reads); none: no live log. */
        readonly appendText?: (name: string, text: string) => Promise<void>;
      })
    | undefined;
  /** Asks an executor's `health` URL: true for a 2xx answer. None: outages last their time. */
  readonly health?: HealthProbe | undefined;
  /** What setup made on fresh checkouts, kept by the lockfiles' hash. None: setup runs every time. */
  readonly setupCache?: SetupCachePort | undefined;
  /** The epic run's span: stories and their steps are traced inside it. None: no trace. */
  readonly trace?: TraceSpan | undefined;
  /**
   * Where other processes merge stories into the epic branch too (a story job: GitHub's
   * copy of it), read before a story is judged and before it merges. None: this process is
   * the only writer.
   */
  readonly upstream?: EpicUpstream | undefined;
}

/** The epic branch as another writer holds it. */
export interface EpicUpstream {
  /** The epic branch's head there, fetched into the repository (undefined: no branch). */
  epicHead(): Promise<string | undefined>;
}

export interface EpicSettings {
  readonly epic: string;
  readonly epicBranch: string;
  readonly plan: Plan;
  readonly config: EpicflowConfig;
  /** Config files stories may never change (relative to the repository root). */
  readonly configPaths: readonly string[];
  /** Folder holding one worktree per story, and the epic's integration tree. */
  readonly worktreesDir: string;
  /** Folder for the executors' isolated homes. */
  readonly homesDir: string;
  /** Resolved environment per executor id (secrets from `${VAR}`). */
  readonly executorEnv: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** CONTRIBUTING.md of the repository, when present. */
  readonly houseRules?: string | undefined;
  /** The key kept judge and verifier answers are sealed with (core/judge/reuse.ts). */
  readonly answerKey: Uint8Array;
  /**
   * The state folder is out of the agent's reach (it runs as another user), so what it
   * holds of earlier runs is used as written. Otherwise a `done` record counts only with
   * its merge on the epic branch, and a stored gate baseline is computed again.
   */
  readonly stateGuarded?: boolean | undefined;
  /** Test hook: called at each named lifecycle point (entries may crash there). */
  readonly onCheckpoint?: ((point: CrashPoint, story: string) => void) | undefined;
}

export class EpicContext {
  readonly merge = new Mutex();
  /** Where epicflow left the epic branch: any other value means someone moved it. */
  epicHead: string;
  halt: Halt | undefined;
  /** Set on SIGINT/SIGTERM: stop launching, stop running stories at their next checkpoint. */
  readonly interrupt = new AbortController();
  private readonly baselines = new Map<string, Promise<GateRun[]>>();
  /**
   * The gate runs each story commit passed its checks with, in this process: a merge whose
   * tree is that commit's (the story was based on the epic head) is not gated again.
   */
  readonly checkedRuns = new Map<string, GateRun[]>();

  constructor(
    readonly settings: EpicSettings,
    readonly ports: EpicPorts,
    readonly roster: RosterHolder,
    readonly epicTree: WorktreePort,
    epicHead: string,
  ) {
    this.epicHead = epicHead;
  }

  /**
   * Stops the epic when `signal` aborts (the terminal's SIGINT, a cancelled Actions step),
   * as `interrupt` says; returns what takes the listener off again.
   */
  stopOn(signal: AbortSignal | undefined): () => void {
    const stop = (): void => this.interrupt.abort();
    if (signal?.aborted === true) stop();
    signal?.addEventListener('abort', stop, { once: true });
    return () => signal?.removeEventListener('abort', stop);
  }

  get config(): EpicflowConfig {
    return this.settings.config;
  }

  private epicChecks: CheckScope | undefined;

  /**
   * What the merged tree is checked with: the root's setup and gates and those of every
   * package the epic's stories touch. The default scope of every check below.
   */
  get scope(): CheckScope {
    this.epicChecks ??= epicScope(this.config, this.settings.plan.stories);
    return this.epicChecks;
  }

  /** What a story's commits are checked with: the root's and its touched packages' checks. */
  storyScope(story: Pick<Story, 'owns'>): CheckScope {
    return storyScope(this.config, story.owns);
  }

  emit(
    kind: EngineEventKind,
    message: string,
    story?: string,
    data?: Record<string, unknown>,
  ): void {
    // A story's event names the executor holding its coder as it is published (a handover shows).
    const executor = story === undefined ? undefined : this.roster.snapshot.leases[story];
    this.ports.events.emit({
      at: this.ports.clock.now().toISOString(),
      kind,
      message,
      ...(story === undefined ? {} : { story }),
      ...(executor === undefined ? {} : { executor }),
      ...(data === undefined ? {} : { data }),
    });
  }

  /**
   * Takes the epic head as it stands upstream into the local branch, when it moved there.
   * A branch moved here meanwhile is left as it is (the merge will say so).
   */
  async followUpstream(): Promise<void> {
    const head = await this.ports.upstream?.epicHead();
    if (head === undefined || head === this.epicHead) return;
    const { git } = this.ports;
    if (await git.updateRef(`refs/heads/${this.settings.epicBranch}`, head, this.epicHead)) {
      this.epicHead = head;
    }
  }

  checkpoint(point: CrashPoint, story: string): void {
    this.settings.onCheckpoint?.(point, story);
  }

  setHalt(halt: Halt): void {
    if (this.halt !== undefined) return;
    this.halt = halt;
    this.emit('halt', `stopped launching stories: ${halt.message}`, undefined, { kind: halt.kind });
  }

  /**
   * Runs the gates in a tree, one command after another (each with its own timeout);
   * `log` gets each command, its whole output and how it ended.
   */
  async runGates(
    cwd: string,
    log?: OutputLog,
    story?: string,
    scope: CheckScope = this.scope,
  ): Promise<GateRun[]> {
    const runs: GateRun[] = [];
    for (const gate of scope.gates) runs.push(await this.runScoped(gate, cwd, log, story));
    return runs;
  }

  /** A gate of a scope in the tree at `cwd`, run in its package's folder and named with it. */
  async runScoped(
    gate: ScopedCommand,
    cwd: string,
    log?: OutputLog,
    story?: string,
  ): Promise<GateRun> {
    if (gate.dir === '.') return this.runGate(gate.command, cwd, log, story);
    log?.line(`(in ${gate.dir})`);
    const run = await this.runGate(gate.command, cwd, log, story, gate.dir);
    return { ...run, command: gate.label };
  }

  /** One gate command in a tree (in its folder `dir` of it), its output to `log`. */
  async runGate(
    command: string,
    cwd: string,
    log?: OutputLog,
    story?: string,
    dir = '.',
  ): Promise<GateRun> {
    log?.line(`$ ${command}`);
    const run = await this.ports.gates.run(command, {
      cwd,
      dir,
      timeoutMs: this.config.timeouts.gateMs,
      signal: this.interrupt.signal,
      ...(log === undefined ? {} : { onLine: (l: string) => log.line(l) }),
      ...(story === undefined ? {} : { story }),
    });
    log?.line(`[${run.ok ? 'passed' : run.timedOut === true ? 'timed out' : 'failed'}]`);
    return run;
  }

  /**
   * Gate `index` once more on the epic head `sha` (after its setup), combined with the
   * baseline's run of it: a base that fails differently from run to run charges a story
   * only with lines new against both. Must be called while holding the merge lock.
   */
  async rerunBaseline(
    sha: string,
    index: number,
    log?: OutputLog,
    scope: CheckScope = this.scope,
  ): Promise<GateRun[]> {
    const baseline = [...(await this.baseline(sha, scope))];
    const first = baseline[index];
    const gate = scope.gates[index];
    if (first === undefined || gate === undefined || first.combined === true) return baseline;
    this.emit(
      'epic',
      `running \`${gate.label}\` on ${sha.slice(0, 12)} again: it failed there before`,
    );
    const again = await this.onBase(sha, async (cwd) => {
      await this.setupOn(cwd, sha, log, undefined, scope);
      return this.runScoped(gate, cwd, log);
    });
    baseline[index] = combinedBaseline(first, again);
    await this.rememberBaseline(sha, baseline, scope);
    return baseline;
  }

  /**
   * The gates on an epic head, computed once per head and kept in the state
   * folder. Must be called while holding the merge lock (its checkout is one folder).
   */
  baseline(sha: string, scope: CheckScope = this.scope): Promise<GateRun[]> {
    const id = `${sha} ${scope.key}`;
    let cached = this.baselines.get(id);
    if (cached === undefined) {
      cached = this.computeBaseline(sha, scope);
      this.baselines.set(id, cached);
      // A failed computation must not be cached.
      cached.catch(() => this.baselines.delete(id));
    }
    return cached;
  }

  /** Records the gate result of a merged tree as the baseline of its head. */
  async rememberBaseline(
    sha: string,
    runs: GateRun[],
    scope: CheckScope = this.scope,
  ): Promise<void> {
    this.baselines.set(`${sha} ${scope.key}`, Promise.resolve(runs));
    await this.ports.state.writeJson(this.baselineFile(sha, scope), runs);
  }

  /** Stored per head and per scope's commands: a changed config never reuses an old result. */
  private baselineFile(sha: string, scope: CheckScope): string {
    const key = createHash('sha256').update(scope.key).digest('hex').slice(0, 12);
    return `baselines/${sha}-${key}.json`;
  }

  /**
   * A story's gates are the merged tree's for fewer packages: the merged tree's baseline
   * on `sha`, when this process has it, holds each of them.
   */
  private async fromMergedTree(sha: string, scope: CheckScope): Promise<GateRun[] | null> {
    const whole = this.scope;
    const known = whole.key === scope.key ? undefined : this.baselines.get(`${sha} ${whole.key}`);
    if (known === undefined) return null;
    const runs = await known.catch(() => null);
    if (runs?.length !== whole.gates.length) return null;
    const picked = scope.gates.map(
      (g) => runs[whole.gates.findIndex((w) => w.dir === g.dir && w.command === g.command)],
    );
    return picked.every((r) => r !== undefined) ? (picked as GateRun[]) : null;
  }

  private async computeBaseline(sha: string, scope: CheckScope): Promise<GateRun[]> {
    // A baseline decides which failing lines a story is not charged with: one the agent
    // could have written is never used.
    const stored =
      this.settings.stateGuarded === true
        ? await this.ports.state.readJson<GateRun[]>(this.baselineFile(sha, scope))
        : null;
    if (Array.isArray(stored) && stored.length === scope.gates.length) return stored;
    if (scope.gates.length === 0) return [];
    const picked = await this.fromMergedTree(sha, scope);
    if (picked !== null) return picked;
    this.emit('epic', `computing the gate baseline on ${sha.slice(0, 12)}`);
    const runs = await this.onBase(sha, async (cwd) => {
      await this.setupOn(cwd, sha, undefined, undefined, scope);
      return this.runGates(cwd, undefined, undefined, scope);
    });
    await this.ports.state.writeJson(this.baselineFile(sha, scope), runs);
    for (const r of runs) if (!r.ok) this.emit('epic', redOnBaseNote(r, sha));
    return runs;
  }

  /**
   * The base's code runs in a fresh checkout of the epic head `sha` (earlier stories'
   * agents wrote it; nothing they left outside its commits is there), never in the
   * integration tree, which only epicflow's merges touch.
   */
  private onBase<T>(sha: string, work: (cwd: string) => Promise<T>): Promise<T> {
    return fromCommit(
      this,
      {
        sha,
        name: BASE_TREE,
        during: 'the baseline gates',
        note: (note, restored) =>
          this.emit('epic', note, undefined, restored === undefined ? undefined : { restored }),
      },
      (tree) => work(tree.path),
    );
  }

  /**
   * Setup on a fresh checkout epicflow made of `sha` (never a tree an agent worked in):
   * from the setup cache when the commit's setup commands and lockfiles were set up
   * before (`setupCache`), else run there, and kept when it passed.
   */
  setupOn(
    tree: string,
    sha: string,
    log?: OutputLog,
    story?: string,
    scope: CheckScope = this.scope,
  ): Promise<{ output: string; command: string; setup: ScopedCommand } | null> {
    return setupFromCache(this.ports, this.config.setupCache, {
      tree,
      sha,
      scope,
      epic: this.settings.epic,
      say: (line) => {
        log?.line(line);
        this.emit(story === undefined ? 'epic' : 'story', line, story);
      },
      run: () => this.runSetup(tree, log, story, scope),
    });
  }

  /**
   * Runs the scope's setups in a tree (the root's, then each package's in its folder);
   * returns the first failing one, or null when they passed or there are none.
   */
  async runSetup(
    cwd: string,
    log?: OutputLog,
    story?: string,
    scope: CheckScope = this.scope,
  ): Promise<{ output: string; command: string; setup: ScopedCommand } | null> {
    for (const setup of scope.setup) {
      if (setup.dir !== '.') log?.line(`(in ${setup.dir})`);
      log?.line(`$ ${setup.command}`);
      const r = await this.ports.gates.run(setup.command, {
        cwd,
        dir: setup.dir,
        timeoutMs: this.config.timeouts.gateMs,
        signal: this.interrupt.signal,
        ...(log === undefined ? {} : { onLine: (l: string) => log.line(l) }),
        ...(story === undefined ? {} : { story }),
      });
      log?.line(`[${r.ok ? 'passed' : r.timedOut === true ? 'timed out' : 'failed'}]`);
      if (!r.ok) return { output: r.output, command: setup.label, setup };
    }
    return null;
  }
}
