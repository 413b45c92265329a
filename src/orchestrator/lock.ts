/**
 * One decision at a time per epic within this process. Records are written
 * with compare-and-swap, so parallel decisions never dispatch a story twice;
 * but the "ensure" writes (a sub-issue, a sticky comment) are find-then-create,
 * and two of them racing would both create. Serialising per epic closes that
 * race for one App process; across processes the records still keep dispatches
 * single (see docs/setup-app.md).
 */
const tails = new Map<string, Promise<unknown>>();

/** Whether a decision on `key` is running or queued in this process right now. */
export function epicLockBusy(key: string): boolean {
  return tails.has(key);
}

export async function withEpicLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    // Forget the key once nobody queued behind us, so the map does not grow.
    if (tails.get(key) === tail) tails.delete(key);
  }
}
