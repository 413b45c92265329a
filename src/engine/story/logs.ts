/**
 * The logs of one story's run, where the entry keeps them: `logs/<story>/<attempt>-<n>-<kind>.log`
 * (core/story/logs.ts), each bounded, with executors' secrets redacted. The last one written is
 * what a failure points to.
 */
import { LogBuffer, logName, logSecrets, type LogKind } from '../../core/story/index.js';
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

  /** A buffer for one command's or turn's output. */
  open(): LogBuffer {
    return new LogBuffer(logSecrets(this.ctx.settings.executorEnv));
  }

  /** Writes the buffer as the story's next log (when logs are kept); returns its path. */
  async save(kind: LogKind, log: LogBuffer): Promise<string | undefined> {
    const sink = this.ctx.ports.logs;
    if (sink === undefined) return undefined;
    this.n += 1;
    const path = await sink.writeText(logName(this.story, this.attempt, this.n, kind), log.text());
    this.last = path;
    return path;
  }

  /** Runs `work` with a fresh buffer and saves it, whatever the outcome, unless nothing ran. */
  async capture<T>(kind: LogKind, work: (log: LogBuffer) => Promise<T>): Promise<T> {
    const log = this.open();
    try {
      return await work(log);
    } finally {
      if (!log.empty) await this.save(kind, log);
    }
  }
}
