/**
 * Pushes held until several have come: jobs racing to move one branch, each having read the
 * branch before any of them moves it — a race made certain instead of likely
 * (`gh.holdPushes`).
 */
import { gunzipSync } from 'node:zlib';

/** The refs a receive-pack request updates: its command lines, before the pack. */
export function refsOfPush(body: Buffer, encoding: string | undefined): string[] {
  const data = encoding === 'gzip' ? gunzipSync(body) : body;
  const refs: string[] = [];
  let at = 0;
  while (at + 4 <= data.length) {
    const length = Number.parseInt(data.subarray(at, at + 4).toString('latin1'), 16);
    // A flush packet (0000) ends the commands; anything else unreadable ends the search.
    if (!Number.isInteger(length) || length < 4) break;
    const command = (
      data
        .subarray(at + 4, at + length)
        .toString('latin1')
        .split('\0')[0] ?? ''
    )
      .replace(/\n$/, '')
      .split(' ');
    if (command[2] !== undefined) refs.push(command[2]);
    at += length;
  }
  return refs;
}

export class PushHolds {
  private readonly holds = new Map<string, { count: number; waiting: (() => void)[] }>();

  /** The next pushes updating `ref` wait until `count` of them have come, then all go on. */
  hold(ref: string, count: number): void {
    this.holds.set(ref, { count, waiting: [] });
  }

  get active(): boolean {
    return this.holds.size > 0;
  }

  /**
   * Returns once no hold stops a push updating `refs`: at once when none is held, else when
   * the last push of the hold has come (in the order they came), or after `timeoutMs`, so a
   * test whose second push never comes fails on what it asserts rather than hanging.
   */
  async pass(refs: readonly string[], timeoutMs = 60_000): Promise<void> {
    for (const ref of refs) {
      const hold = this.holds.get(ref);
      if (hold === undefined) continue;
      await new Promise<void>((go) => {
        hold.waiting.push(go);
        if (hold.waiting.length >= hold.count) {
          this.holds.delete(ref);
          for (const waiting of hold.waiting) waiting();
        } else {
          setTimeout(go, timeoutMs).unref();
        }
      });
    }
  }
}
