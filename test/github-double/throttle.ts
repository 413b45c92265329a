/**
 * `@octokit/plugin-throttling` options that wait on the double's clock instead of real time,
 * for a client under test (the App's probot, a story job's Octokit): the same plugin, the
 * same decisions and the same spacing (writes 1 s apart, writes that notify 3 s apart,
 * searches 2 s apart, rate-limit waits as long as `retry-after` or `x-ratelimit-reset` say),
 * but every wait is a `clock.sleep`, so an `auto` clock skips it when everyone waits.
 *
 *   const throttle = throttleOnClock(gh.clock, { actor: 'app' });
 *   ProbotOctokit.defaults((o) => ({ ...o, throttle }))
 *
 * What the plugin does with these (its source, 11.x): `write`, `notifications` and `search`
 * are limiters whose `key(id).schedule(options, fn)` it awaits before a request; `global`
 * and `auth` bound concurrency; the retry limiter waits `retryAfter × retryAfterBaseValue`
 * ms before retrying, after `onRateLimit` / `onSecondaryRateLimit` said yes. Here the
 * handlers sleep on the clock first and the base value is 0.
 */
import Bottleneck from 'bottleneck';
import type { Clock } from './clock.js';

/** What a client needs of the clock: the double's `gh.clock`, or one relayed from it. */
export type ClockLike = Pick<Clock, 'now' | 'sleep' | 'sleepUntil'>;

type Decide = (
  retryAfter: number,
  options: { method: string; url: string },
  octokit: unknown,
  retryCount: number,
) => boolean;

/** One key's limiter: starts at least `minTime` apart on the clock, one at a time. */
class ClockLimiter {
  private next = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly clock: ClockLike,
    private readonly minTime: number,
    private readonly actor: string | undefined,
  ) {}

  schedule<T>(...args: [unknown, (...a: unknown[]) => Promise<T> | T, ...unknown[]]): Promise<T> {
    const [, fn, ...rest] = args;
    const turn = this.chain.then(async () => {
      const wait = this.next - this.clock.now();
      if (wait > 0) await this.clock.sleep(wait, this.actor);
      this.next = this.clock.now() + this.minTime;
    });
    this.chain = turn.catch(() => undefined);
    return turn.then(() => fn(...rest));
  }
}

/** The part of `Bottleneck.Group` the plugin uses: `key(id)`. */
class ClockGroup {
  private readonly limiters = new Map<string, ClockLimiter>();

  constructor(
    private readonly clock: ClockLike,
    private readonly minTime: number,
    private readonly actor: string | undefined,
  ) {}

  key(id = ''): ClockLimiter {
    let l = this.limiters.get(id);
    if (!l) {
      l = new ClockLimiter(this.clock, this.minTime, this.actor);
      this.limiters.set(id, l);
    }
    return l;
  }
}

export interface ClockThrottleOptions {
  /** Who waits (see `clock.track`): the App, a job. */
  readonly actor?: string;
  /**
   * Whether to retry after a limit: the client's own rule. Default probot's: always (its
   * default handlers log and return true). The Action's `createOctokit`: `count < 3`.
   */
  readonly retry?: Decide;
  /** Told of every limit met: `primary` or `secondary`, and the wait in seconds. */
  readonly onLimit?: (kind: 'primary' | 'secondary', retryAfter: number, url: string) => void;
}

/**
 * Throttle options for one client process: limiters of its own, as a process has (the
 * plugin's default groups are shared by every Octokit of a process).
 */
export function throttleOnClock(
  clock: ClockLike,
  options: ClockThrottleOptions = {},
): Record<string, unknown> {
  const { actor } = options;
  const retry: Decide = options.retry ?? (() => true);
  return {
    enabled: true,
    retryAfterBaseValue: 0,
    global: new Bottleneck.Group({ maxConcurrent: 10 }),
    auth: new Bottleneck.Group({ maxConcurrent: 1 }),
    write: new ClockGroup(clock, 1000, actor),
    notifications: new ClockGroup(clock, 3000, actor),
    search: new ClockGroup(clock, 2000, actor),
    onSecondaryRateLimit: async (
      retryAfter: number,
      o: { method: string; url: string },
      octokit: unknown,
      count: number,
    ) => {
      options.onLimit?.('secondary', retryAfter, o.url);
      if (!retry(retryAfter, o, octokit, count)) return false;
      await clock.sleep(retryAfter * 1000, actor);
      return true;
    },
    onRateLimit: async (
      retryAfter: number,
      o: { method: string; url: string },
      octokit: unknown,
      count: number,
    ) => {
      options.onLimit?.('primary', retryAfter, o.url);
      if (!retry(retryAfter, o, octokit, count)) return false;
      // The plugin computed the wait from `x-ratelimit-reset` (the clock's time) and
      // `Date.now()`: real now + that wait is the reset on the clock (an `auto` clock is never
      // behind real time).
      await clock.sleepUntil(Date.now() + retryAfter * 1000, actor);
      return true;
    },
  };
}
