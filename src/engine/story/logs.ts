/**
 * The logs of one story's run, where the entry keeps them: `logs/<story>/<attempt>-<n>-<kind>.log`
 * (core/story/logs.ts), each bounded, with executors' secrets redacted. The last one written is
 * what a failure points to.
 */
import {
  liveHeader,
  liveLogName,
  LogBuffer,
  logName,
  logSecrets,
  type LogKind,
} from '../../core/story/index.js';
import type { EpicContext } from '../context.js';

export class StoryLogs {
  private n = 0;
  /** The path of the log written last, if any. */
  last: string | undefined;

  constructor(
    private readonly ctx: EpicContext,
    private readonly story: string,
    private readonly attempt: number,
  ) {}

  /** Appends to the live log in order, a batch at a time; never fails the story. */
  private live: Promise<unknown> | undefined;
  private pending = '';
  private flushing = false;

  private toLive(text: string): void {
    const append = this.ctx.ports.logs?.appendText;
    if (append === undefined) return;
    const sink = this.ctx.ports.logs;
    const name = liveLogName(this.story);
    // The first step of this attempt starts the live log anew.
    this.live ??= (sink?.writeText(name, '') ?? Promise.resolve()).catch(() => undefined);
    this.pending += text;
    if (this.flushing) return;
    this.flushing = true;
    this.live = this.live
      .then(async () => {
        this.flushing = false;
        const batch = this.pending;
        this.pending = '';
        await sink?.appendText?.(name, batch);
      })
      .catch(() => undefined);
  }

  /** A buffer for one command's or turn's output, followed live in `live.log`. */
  open(kind: LogKind): LogBuffer {
    this.toLive(`${liveHeader(this.attempt, kind)}\n`);
    return new LogBuffer(logSecrets(this.ctx.settings.executorEnv)).tap((l) =>
      this.toLive(`${l}\n`),
    );
  }

  /** Writes the buffer as the story's next log (when logs are kept); returns its path. */
  async save(kind: LogKind, log: LogBuffer): Promise<string | undefined> {
    await this.live;
    const sink = this.ctx.ports.logs;
    if (sink === undefined) return undefined;
    this.n += 1;
    const path = await sink.writeText(logName(this.story, this.attempt, this.n, kind), log.text());
    this.last = path;
    return path;
  }

  /** Runs `work` with a fresh buffer and saves it, whatever the outcome, unless nothing ran. */
  async capture<T>(kind: LogKind, work: (log: LogBuffer) => Promise<T>): Promise<T> {
    const log = this.open(kind);
    try {
      return await work(log);
    } finally {
      if (!log.empty) await this.save(kind, log);
    }
  }
}
