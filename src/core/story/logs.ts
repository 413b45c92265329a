/**
 * A story's logs: the whole output of its setup, of each check's gates and of each
 * agent turn (what the executor printed), kept in the epic's state folder so that a
 * short failure reason can point to all of it. Each log is bounded (the tail is
 * kept, and a cut says so in its first line, `cutNotice`) and never holds an
 * executor's resolved environment values (its secrets).
 */
import { cutNotice } from '../cut-notice.js';

/** The most one log keeps: its last 5 MiB. */
const LOG_MAX_BYTES = 5 * 1024 * 1024;

/** What a log holds: setup, one check's gates, an agent turn, or the merge's setup and gates. */
export type LogKind = 'setup' | 'gates' | 'coder' | 'judge' | 'verifier' | 'reviewer' | 'merge';

/** A value shorter than this is not treated as a secret (it would blank ordinary words). */
const MIN_SECRET_LENGTH = 4;

/** What replaces a secret in a log. */
const REDACTED = '[redacted]';

/** The folder of a story's logs, relative to the epic's state folder. */
export function storyLogsDir(story: string): string {
  return `logs/${story}`;
}

/** `logs/<story>/<attempt>-<n>-<kind>.log`: the n-th log of an attempt. */
export function logName(story: string, attempt: number, n: number, kind: LogKind): string {
  return `${storyLogsDir(story)}/${attempt}-${n}-${kind}.log`;
}

/**
 * `logs/<story>/live.log`: what the story's current attempt prints, appended as it comes
 * (`epicflow logs --follow`); started anew by each attempt.
 */
export function liveLogName(story: string): string {
  return `${storyLogsDir(story)}/live.log`;
}

/** The line that opens each step in the live log. */
export function liveHeader(attempt: number, kind: LogKind): string {
  return `==> attempt ${attempt}: ${kind} <==`;
}

/** A short reason with the path of the log that holds the whole output. */
export function withLog(reason: string, path: string | undefined): string {
  return path === undefined ? reason : `${reason} (log: ${path})`;
}

/** The values to redact: every executor's resolved environment values, longest first. */
export function logSecrets(
  envs: Readonly<Record<string, Readonly<Record<string, string>>>>,
): string[] {
  const values = new Set<string>();
  for (const env of Object.values(envs)) {
    for (const v of Object.values(env)) if (v.length >= MIN_SECRET_LENGTH) values.add(v);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

const encoder = new TextEncoder();

/** Lines of output as they stream, secrets redacted, the tail kept within `max` bytes. */
export class LogBuffer {
  private lines: string[] = [];
  private start = 0;
  private bytes = 0;
  private cutBytes = 0;

  constructor(
    private readonly secrets: readonly string[],
    private readonly max = LOG_MAX_BYTES,
  ) {}

  private tapped: ((line: string) => void) | undefined;

  /** Also hands each line, secrets redacted, to `tap` as it comes (the live log). */
  tap(tap: (line: string) => void): this {
    this.tapped = tap;
    return this;
  }

  line(text: string): void {
    let clean = text;
    for (const s of this.secrets) if (clean.includes(s)) clean = clean.split(s).join(REDACTED);
    this.tapped?.(clean);
    this.lines.push(clean);
    this.bytes += encoder.encode(clean).length + 1;
    while (this.bytes > this.max && this.start < this.lines.length) {
      const dropped = encoder.encode(this.lines[this.start] as string).length + 1;
      this.bytes -= dropped;
      this.cutBytes += dropped;
      this.start += 1;
    }
    // Dropped lines are let go of now and then, not on every line.
    if (this.start > 1024 && this.start * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.start);
      this.start = 0;
    }
  }

  /** Nothing was written to it. */
  get empty(): boolean {
    return this.lines.length === 0 && this.cutBytes === 0;
  }

  /** The log's text: a cut notice first when lines were dropped. */
  text(): string {
    const kept = this.lines.slice(this.start);
    const notice = this.cutBytes > 0 ? [cutNotice(this.cutBytes, this.bytes)] : [];
    return [...notice, ...kept].map((l) => `${l}\n`).join('');
  }
}
