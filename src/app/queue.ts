/**
 * Work queued by key: jobs with the same key run one after another in arrival
 * order, jobs with different keys run at the same time. The App queues each
 * delivery under its epic, so it can answer GitHub as soon as the delivery is
 * verified and queued, and `idle()` lets tests (and a graceful shutdown) wait
 * until everything queued is done. `jobs()` tells what is queued or running and
 * since when (the health check and the shutdown log read it).
 */

/** A job as the queue knows it: its label, and when it started running (unset while it waits). */
export interface QueuedJob {
  readonly label: string;
  /** `Date.now()` when the job started; undefined while it waits behind its key. */
  readonly startedAt: number | undefined;
}

export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly queued = new Set<{ label: string; startedAt: number | undefined }>();
  private waiters: (() => void)[] = [];

  /** Queues `job` behind the others of `key`; the promise settles with the job. */
  push<T>(key: string, job: () => Promise<T>, label: string = key): Promise<T> {
    const entry: { label: string; startedAt: number | undefined } = { label, startedAt: undefined };
    this.queued.add(entry);
    const before = this.tails.get(key) ?? Promise.resolve();
    const run = before.then(() => {
      entry.startedAt = Date.now();
      return job();
    });
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      // Forget the key once nobody queued behind this job, so the map does not grow.
      if (this.tails.get(key) === tail) this.tails.delete(key);
      this.queued.delete(entry);
      if (this.queued.size === 0) {
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters) w();
      }
    });
    return run;
  }

  /** True while any job is queued or running. */
  busy(): boolean {
    return this.queued.size > 0;
  }

  /** The jobs queued or running, in the order they were pushed. */
  jobs(): QueuedJob[] {
    return [...this.queued].map((j) => ({ label: j.label, startedAt: j.startedAt }));
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    if (this.queued.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
