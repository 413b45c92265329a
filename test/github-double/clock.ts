/**
 * The clock the double's rate limits run on: windows, resets, `retry-after` and the times
 * in `gh.stats` are read from it. Three modes:
 *
 * - `real` (default): `Date.now()`; `sleep` is a timer.
 * - `manual`: frozen at its start until a test calls `advance(ms)`; sleepers wake when the
 *   clock passes their deadline. For exact answers at exact moments.
 * - `auto`: real time plus every jump made so far (never behind `Date.now()`). When every
 *   participant is waiting on the clock (no request or delivery in flight at the double,
 *   every tracked busy actor asleep on the clock, nothing else happening for `quietMs`), the
 *   clock jumps to the earliest sleeper's deadline. Hours of GitHub time pass in seconds,
 *   while work that takes real time still takes it.
 *
 * Clients wait on it through `sleep`/`sleepUntil` (see `throttle.ts` for Octokit's
 * throttling plugin on this clock).
 */
export type ClockMode = 'real' | 'manual' | 'auto';

export type ClockOptions =
  | ClockMode
  | { readonly mode: 'real' }
  | { readonly mode: 'manual'; readonly start?: number }
  | { readonly mode: 'auto'; readonly quietMs?: number };

export interface Clock {
  readonly mode: ClockMode;
  /** Milliseconds since the epoch, on this clock. */
  now(): number;
  /** Resolves once the clock has moved `ms` forward. `actor` says who waits (see `track`). */
  sleep(ms: number, actor?: string): Promise<void>;
  /** Resolves once the clock reads `epochMs` or later. */
  sleepUntil(epochMs: number, actor?: string): Promise<void>;
  /** Moves a `manual` or `auto` clock forward, waking the sleepers it passes. */
  advance(ms: number): void;
  /** How long the clock has jumped ahead of real time so far (`auto`, `manual`: since start). */
  readonly skippedMs: number;
  /** Sleepers waiting now. */
  readonly sleeping: number;
  /**
   * An `auto` clock never jumps while `busy()` says this actor is working and none of its
   * sleeps is pending: an App computing a decision holds the clock; an App asleep on a
   * rate limit does not. Returns a function that forgets the actor.
   */
  track(actor: string, busy: () => boolean): () => void;
}

interface Sleeper {
  readonly deadline: number;
  readonly actor: string | undefined;
  readonly wake: () => void;
}

/** What the double tells an `auto` clock about its own traffic. */
export interface Activity {
  /** Requests being answered and webhook deliveries not yet answered. */
  inFlight(): number;
}

const DEFAULT_QUIET_MS = 10;

export function createClock(options: ClockOptions = 'real', activity?: Activity): ClockImpl {
  const o = typeof options === 'string' ? { mode: options } : options;
  return new ClockImpl(
    o.mode,
    o.mode === 'manual' ? ('start' in o && o.start !== undefined ? o.start : Date.now()) : 0,
    o.mode === 'auto' && 'quietMs' in o && o.quietMs !== undefined ? o.quietMs : DEFAULT_QUIET_MS,
    activity,
  );
}

export class ClockImpl implements Clock {
  private skipped = 0;
  private readonly sleepers: Sleeper[] = [];
  private readonly actors = new Map<string, () => boolean>();
  private timer: NodeJS.Timeout | undefined;
  private lastActivity = performance.now();

  constructor(
    readonly mode: ClockMode,
    private readonly start: number,
    private readonly quietMs: number,
    private readonly activity: Activity | undefined,
  ) {}

  now(): number {
    if (this.mode === 'real') return Date.now();
    if (this.mode === 'manual') return this.start + this.skipped;
    return Date.now() + this.skipped;
  }

  get skippedMs(): number {
    return this.skipped;
  }

  get sleeping(): number {
    return this.sleepers.length;
  }

  sleep(ms: number, actor?: string): Promise<void> {
    return this.sleepUntil(this.now() + Math.max(0, ms), actor);
  }

  sleepUntil(epochMs: number, actor?: string): Promise<void> {
    if (this.mode === 'real') {
      const wait = epochMs - Date.now();
      return wait <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, wait));
    }
    if (epochMs <= this.now()) return Promise.resolve();
    return new Promise<void>((wake) => {
      const s: Sleeper = { deadline: epochMs, actor, wake };
      const at = this.sleepers.findIndex((x) => x.deadline > epochMs);
      if (at < 0) this.sleepers.push(s);
      else this.sleepers.splice(at, 0, s);
      this.schedule();
    });
  }

  advance(ms: number): void {
    if (this.mode === 'real') {
      throw new Error(
        'github-double: a real clock cannot be advanced (use clock: "manual" or "auto")',
      );
    }
    if (!(ms >= 0)) throw new Error(`github-double: cannot advance the clock by ${ms} ms`);
    this.skipped += ms;
    this.wakeDue();
  }

  track(actor: string, busy: () => boolean): () => void {
    this.actors.set(actor, busy);
    return () => {
      this.actors.delete(actor);
      this.schedule();
    };
  }

  /** The double calls this when a request or delivery starts or ends. */
  touch(): void {
    this.lastActivity = performance.now();
    if (this.mode === 'auto' && this.sleepers.length > 0) this.schedule();
  }

  /** Stops the timer (the double is closing); sleepers are left as they are. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wakeDue(): void {
    const now = this.now();
    while (this.sleepers.length > 0 && (this.sleepers[0]?.deadline ?? Infinity) <= now) {
      this.sleepers.shift()?.wake();
    }
    this.schedule();
  }

  /** `auto`: wakes sleepers as real time reaches them, and jumps when everyone waits. */
  private schedule(): void {
    if (this.mode !== 'auto') return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const first = this.sleepers[0];
    if (!first) return;
    const due = first.deadline - this.now();
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (this.everyoneWaits()) this.skipped += Math.max(0, first.deadline - this.now());
        this.wakeDue();
      },
      Math.max(0, Math.min(due, this.quietMs)),
    );
  }

  private everyoneWaits(): boolean {
    if (this.sleepers.length === 0) return false;
    if ((this.activity?.inFlight() ?? 0) > 0) return false;
    if (performance.now() - this.lastActivity < this.quietMs) return false;
    for (const [actor, busy] of this.actors) {
      if (busy() && !this.sleepers.some((s) => s.actor === actor)) return false;
    }
    return true;
  }
}
