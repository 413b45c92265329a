/**
 * A delivery GitHub refused for a rate limit is handled again by the App itself once the
 * limit has passed (`retry-after`, `x-ratelimit-reset`): a delayed self-redelivery, so an
 * epic never waits for someone's `/resume` because of a limit. Every step of a decision is
 * idempotent, so handling the same event again only does what is still to do. The wait
 * runs outside the delivery queue (a queued job an hour long would read as stuck), on a
 * clock the App is given (tests and benchmarks give it the GitHub double's).
 */
import { rateLimitedUntil } from '../adapters/github/index.js';

/** What the App needs of time: now, and a wait. */
export interface AppClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: AppClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Self-redeliveries of one delivery, after which the next event (or `/resume`) picks it up. */
const MAX_SELF_RETRIES = 5;
/** Past the reset a little, so the retry does not come a hair too early. */
const MARGIN_MS = 1000;

export class SelfRetries {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly clock: AppClock) {}

  /**
   * If `e` is a rate limit and `attempt` (1 for the first handling) leaves room, waits
   * until the limit passes, then runs `again` (which queues the delivery); returns the
   * time of the retry, or undefined when none is scheduled.
   */
  schedule(e: unknown, attempt: number, again: () => Promise<void>): Date | undefined {
    if (attempt > MAX_SELF_RETRIES) return undefined;
    const now = this.clock.now();
    const until = rateLimitedUntil(e, now);
    if (until === undefined) return undefined;
    const at = until + MARGIN_MS;
    const retry = this.clock
      .sleep(at - now)
      .then(again)
      .catch(() => undefined) // logged by the handler; the next self-retry is its own
      .finally(() => this.pending.delete(retry));
    this.pending.add(retry);
    return new Date(at);
  }

  /** True while a retry is waiting or running. */
  busy(): boolean {
    return this.pending.size > 0;
  }

  /** Resolves once no retry is waiting (those scheduled meanwhile included). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
