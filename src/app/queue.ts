/**
 * Work queued by key: jobs with the same key run one after another in arrival
 * order, jobs with different keys run at the same time. The App queues each
 * delivery under its epic, so it can answer GitHub as soon as the delivery is
 * verified and queued, and `idle()` lets tests (and a graceful shutdown) wait
 * until everything queued is done.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private running = 0;
  private waiters: (() => void)[] = [];

  /** Queues `job` behind the others of `key`; the promise settles with the job. */
  push<T>(key: string, job: () => Promise<T>): Promise<T> {
    this.running += 1;
    const before = this.tails.get(key) ?? Promise.resolve();
    const run = before.then(job);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      // Forget the key once nobody queued behind this job, so the map does not grow.
      if (this.tails.get(key) === tail) this.tails.delete(key);
      this.running -= 1;
      if (this.running === 0) {
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters) w();
      }
    });
    return run;
  }

  /** True while any job is queued or running. */
  busy(): boolean {
    return this.running > 0;
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
