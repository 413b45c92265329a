/**
 * What every use case of one epic run shares: the plan and config, the ports,
 * the roster, the epic's integration tree and where epicflow left the epic
 * branch. Mutable parts (epic head, roster state, halt) live here, in one place.
 */
import type { TraceSpan } from './trace.js';
import { createHash } from 'node:crypto';
import type { EpicflowConfig, ExecutorConfig } from '../core/config/types.js';
import { combinedBaseline, type GateRun } from '../core/gates/index.js';
import type { Halt, Plan } from '../core/model.js';
import {
  leaseCoder,
  nextExecutor,
  nextCapacityChange,
  persistableRosterState,
  pickHelper,
  recordMissingBinary,
  recordSignal,
  releaseLease,
  restoreRosterState,
  rosterExhausted,
  freeCoderSlots,
  syncPauses,
  type Exclusion,
  type HelperPick,
  type RosterState,
} from '../core/roster/index.js';
import type { OutcomeClass } from '../core/executor.js';
import {
  dueHealthChecks,
  healthy,
  nextHealthCheck,
  type HealthCheck,
} from '../core/roster/health.js';
import { Mutex } from './mutex.js';
import type {
  Clock,
  CrashPoint,
  RunClock,
  EngineEventKind,
  EventSink,
  ExecutorLookup,
  GateRunner,
  GitPort,
  StateStore,
  WorktreePort,
} from './ports.js';

/** An HTTP GET of a health URL: true when it answered 2xx (in time). */
export type HealthProbe = (url: string) => Promise<boolean>;

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

/** The roster of this run, persisted as `roster.json` after every change. */
export class RosterHolder {
  private current: RosterState;

  constructor(
    private readonly executors: readonly ExecutorConfig[],
    initial: RosterState,
    private readonly state: StateStore,
    private readonly clock: Clock,
  ) {
    this.current = initial;
  }

  get snapshot(): RosterState {
    return this.current;
  }

  /** Pauses and resumes written by `epicflow roster` meanwhile take effect at once. */
  private async withDiskPauses(next: RosterState): Promise<RosterState> {
    const disk = await this.state.readJson<unknown>('roster.json');
    return syncPauses(next, disk === null ? null : restoreRosterState(disk));
  }

  private async persist(proposed: RosterState): Promise<void> {
    const next = await this.withDiskPauses(proposed);
    const changed =
      JSON.stringify(persistableRosterState(next)) !==
      JSON.stringify(persistableRosterState(this.current));
    this.current = next;
    if (changed) await this.state.writeJson('roster.json', persistableRosterState(next));
  }

  freeSlots(): number {
    return freeCoderSlots(this.executors, this.current, this.clock.now());
  }

  exhausted(): ReturnType<typeof rosterExhausted> {
    return rosterExhausted(this.executors, this.current, this.clock.now());
  }

  async lease(story: string, preferred: string | undefined): Promise<ExecutorConfig | null> {
    this.current = await this.withDiskPauses(this.current);
    const r = leaseCoder(this.executors, this.current, { story, preferred, now: this.clock.now() });
    await this.persist(r.state);
    return r.executor;
  }

  async release(story: string): Promise<void> {
    await this.persist(releaseLease(this.current, story));
  }

  async handover(story: string, excluding: readonly string[]): Promise<ExecutorConfig | null> {
    const r = nextExecutor(this.executors, this.current, {
      story,
      excluding,
      now: this.clock.now(),
    });
    await this.persist(r.state);
    return r.executor;
  }

  /** A judge or verifier for one call, avoiding the story's coders when another can serve. */
  helper(
    role: 'judge' | 'verifier' | 'reviewer',
    preferred: string | undefined,
    avoid: readonly string[],
  ): HelperPick | null {
    return pickHelper(this.executors, this.current, {
      role,
      preferred,
      avoid,
      now: this.clock.now(),
    });
  }

  /** The executor's CLI is not installed: out for the run. */
  async missingBinary(executor: string, detail: string): Promise<Exclusion> {
    const r = recordMissingBinary(this.current, { executor, detail, now: this.clock.now() });
    await this.persist(r.state);
    return r.exclusion;
  }

  /** When an exclusion expires next or a health URL is due (capacity may return), if ever. */
  nextChange(): Date | null {
    const now = this.clock.now();
    const times = [
      nextCapacityChange(this.current, now),
      nextHealthCheck(this.executors, this.current, now, this.asked),
    ].filter((t): t is Date => t !== null);
    return times.sort((a, b) => a.getTime() - b.getTime())[0] ?? null;
  }

  /** When each executor's health URL was last asked (ms). */
  private readonly asked = new Map<string, number>();

  /**
   * Asks the health URL of each executor out for an outage (at most every 15 s each);
   * those that answered 2xx are back. Returns them with their URL.
   */
  async checkHealth(probe: HealthProbe | undefined): Promise<HealthCheck[]> {
    if (probe === undefined) return [];
    const due = dueHealthChecks(this.executors, this.current, this.clock.now(), this.asked);
    const back: HealthCheck[] = [];
    for (const check of due) {
      this.asked.set(check.id, this.clock.now().getTime());
      if (await probe(check.url)) back.push(check);
    }
    if (back.length === 0) return [];
    let next = this.current;
    for (const { id } of back) next = healthy(next, id, this.clock.now());
    await this.persist(next);
    return back;
  }

  async signal(
    executor: string,
    outcome: OutcomeClass,
    resetAt: string | undefined,
    detail: string,
  ): Promise<Exclusion | null> {
    const r = recordSignal(this.current, {
      executor,
      outcome,
      resetAt,
      detail,
      now: this.clock.now(),
    });
    await this.persist(r.state);
    return r.exclusion;
  }
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

  get config(): EpicflowConfig {
    return this.settings.config;
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
  async runGates(cwd: string, log?: OutputLog, story?: string): Promise<GateRun[]> {
    const runs: GateRun[] = [];
    for (const command of this.config.gates)
      runs.push(await this.runGate(command, cwd, log, story));
    return runs;
  }

  /** One gate command in a tree, its output to `log`. */
  async runGate(command: string, cwd: string, log?: OutputLog, story?: string): Promise<GateRun> {
    log?.line(`$ ${command}`);
    const run = await this.ports.gates.run(command, {
      cwd,
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
   * only with lines new against both. Must be called while holding the merge lock; the
   * epic tree is left at `sha`.
   */
  async rerunBaseline(sha: string, index: number, log?: OutputLog): Promise<GateRun[]> {
    const baseline = [...(await this.baseline(sha))];
    const first = baseline[index];
    const command = this.config.gates[index];
    if (first === undefined || command === undefined || first.combined === true) return baseline;
    this.emit(
      'epic',
      `running \`${command}\` on ${sha.slice(0, 12)} again: it failed there before`,
    );
    if ((await this.epicTree.head()) !== sha) await this.epicTree.resetHard(sha);
    await this.runSetup(this.epicTree.path, log);
    const again = await this.runGate(command, this.epicTree.path, log);
    await this.epicTree.resetHard(sha);
    baseline[index] = combinedBaseline(first, again);
    await this.rememberBaseline(sha, baseline);
    return baseline;
  }

  /**
   * The gates on an epic head, computed once per head and kept in the state
   * folder. Must be called while holding the merge lock, with the epic tree at `sha`.
   */
  baseline(sha: string): Promise<GateRun[]> {
    let cached = this.baselines.get(sha);
    if (cached === undefined) {
      cached = this.computeBaseline(sha);
      this.baselines.set(sha, cached);
      // A failed computation must not be cached.
      cached.catch(() => this.baselines.delete(sha));
    }
    return cached;
  }

  /** Records the gate result of a merged tree as the baseline of its head. */
  async rememberBaseline(sha: string, runs: GateRun[]): Promise<void> {
    this.baselines.set(sha, Promise.resolve(runs));
    await this.ports.state.writeJson(this.baselineFile(sha), runs);
  }

  /** Stored per head and per gate commands: a changed config never reuses an old result. */
  private baselineFile(sha: string): string {
    const key = createHash('sha256')
      .update(JSON.stringify({ gates: this.config.gates, setup: this.config.setup ?? null }))
      .digest('hex')
      .slice(0, 12);
    return `baselines/${sha}-${key}.json`;
  }

  private async computeBaseline(sha: string): Promise<GateRun[]> {
    // A baseline decides which failing lines a story is not charged with: one the agent
    // could have written is never used.
    const stored =
      this.settings.stateGuarded === true
        ? await this.ports.state.readJson<GateRun[]>(this.baselineFile(sha))
        : null;
    if (Array.isArray(stored) && stored.length === this.config.gates.length) return stored;
    if (this.config.gates.length === 0) return [];
    this.emit('epic', `computing the gate baseline on ${sha.slice(0, 12)}`);
    if ((await this.epicTree.head()) !== sha) await this.epicTree.resetHard(sha);
    await this.runSetup(this.epicTree.path);
    const runs = await this.runGates(this.epicTree.path);
    await this.ports.state.writeJson(this.baselineFile(sha), runs);
    return runs;
  }

  /** The `setup` command, or null when there is none (absent or blank). */
  get setupCommand(): string | null {
    const setup = this.config.setup;
    return setup === undefined || setup.trim() === '' ? null : setup;
  }

  /** Runs `setup` in a tree; returns the failing run, or null when it passed or there is none. */
  async runSetup(cwd: string, log?: OutputLog, story?: string): Promise<{ output: string } | null> {
    const setup = this.setupCommand;
    if (setup === null) return null;
    log?.line(`$ ${setup}`);
    const r = await this.ports.gates.run(setup, {
      cwd,
      timeoutMs: this.config.timeouts.gateMs,
      signal: this.interrupt.signal,
      ...(log === undefined ? {} : { onLine: (l: string) => log.line(l) }),
      ...(story === undefined ? {} : { story }),
    });
    log?.line(`[${r.ok ? 'passed' : r.timedOut === true ? 'timed out' : 'failed'}]`);
    return r.ok ? null : { output: r.output };
  }
}
