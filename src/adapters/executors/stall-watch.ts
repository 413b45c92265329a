/**
 * The stall guard of one turn: it reads every line the agent prints and stops the
 * turn (through the signal the process runner is given) when the agent repeats the
 * same tool call `STALL_REPEATS` times in a row, or prints nothing for the turn's
 * `silenceMs`: before the turn's timeout burns the story's budget.
 */
import { formatMs } from '../../core/config/duration.js';
import type { Stall } from '../../core/executor.js';
import { RepeatWatch } from '../../core/harness/tool-calls.js';

/** Node fires longer delays at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class StallWatch {
  private readonly stop = new AbortController();
  private readonly repeats = new RepeatWatch();
  private timer: NodeJS.Timeout | undefined;
  private found: Stall | undefined;
  private stoppedNow = false;
  private readonly onOuterAbort = (): void => this.stop.abort();

  constructor(
    private readonly options: {
      readonly silenceMs?: number | undefined;
      /** The turn's own signal (an interrupt): it stops the turn too. */
      readonly outer?: AbortSignal | undefined;
    },
  ) {
    if (options.outer?.aborted === true) this.stop.abort();
    options.outer?.addEventListener('abort', this.onOuterAbort, { once: true });
    this.arm();
  }

  /** The signal to run the turn with. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** Why the turn was stopped as stalled; undefined when it was not. */
  get stalled(): Stall | undefined {
    return this.found;
  }

  /** The turn was stopped by this watch (a stall, or `stopNow`), not by the turn's own signal. */
  get stoppedHere(): boolean {
    return this.found !== undefined || this.stoppedNow;
  }

  /** Stops the turn now, not as a stall: its output already says how it ended. */
  stopNow(): void {
    if (this.stop.signal.aborted) return;
    this.stoppedNow = true;
    this.end();
    this.stop.abort();
  }

  /** At every line the agent prints, as it prints it: the tool calls it announces (if any). */
  line(calls: readonly string[] = []): void {
    if (this.found !== undefined) return;
    this.arm();
    for (const call of calls) {
      const stall = this.repeats.see(call);
      if (stall !== undefined) return this.fire(stall);
    }
  }

  /** The turn ended: no timer is left behind. */
  end(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.options.outer?.removeEventListener('abort', this.onOuterAbort);
  }

  private arm(): void {
    const ms = this.options.silenceMs;
    if (ms === undefined || !Number.isFinite(ms)) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => this.fire({ signal: 'silence', detail: `no output for ${formatMs(ms)}` }),
      Math.min(Math.max(ms, 0), MAX_TIMER_MS),
    );
    this.timer.unref();
  }

  private fire(stall: Stall): void {
    if (this.found !== undefined || this.stop.signal.aborted) return;
    this.found = stall;
    this.end();
    this.stop.abort();
  }
}
