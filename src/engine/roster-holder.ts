/**
 * The roster of one epic run: leases, outages and handovers decided by the core
 * (core/roster), kept here and persisted as `roster.json` after every change.
 */
import type { ExecutorConfig } from '../core/config/types.js';
import type { OutcomeClass } from '../core/executor.js';
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
import {
  dueHealthChecks,
  healthy,
  nextHealthCheck,
  type HealthCheck,
} from '../core/roster/health.js';
import type { Clock, StateStore } from './ports.js';

/** An HTTP GET of a health URL: true when it answered 2xx (in time). */
export type HealthProbe = (url: string) => Promise<boolean>;

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
