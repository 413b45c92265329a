/**
 * How a child's output is kept while it runs (`run-process.ts`): the tail of text only
 * people read, bounded and saying so when cut; every byte of output a decision is read
 * from, up to a ceiling; and lines as they come, for streaming.
 */
import { StringDecoder } from 'node:string_decoder';
import { cutNotice } from '../../core/cut-notice.js';

const MAX_LINE_CHARS = 1024 * 1024;

export interface Capture {
  push(chunk: Buffer): void;
  text(): string;
  /** Bytes left out at the start. */
  readonly cut: number;
}

/**
 * Keeps the last `max` bytes written to it. When it had to drop some, its text
 * starts with a `cutNotice` line, and notice and tail together fit in `max`.
 */
export class TailBuffer implements Capture {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;
  cut = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.max && this.chunks.length > 0) {
      const first = this.chunks[0] as Buffer;
      const excess = this.size - this.max;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  text(): string {
    const kept = Buffer.concat(this.chunks);
    if (this.dropped === 0) {
      this.cut = 0;
      return kept.toString('utf8');
    }
    const total = this.dropped + kept.length;
    // The notice takes room from the tail, and its length depends on the numbers in it.
    let noticeBytes = 0;
    let start = 0;
    let notice = '';
    for (let i = 0; i < 5; i++) {
      start = kept.length - Math.min(kept.length, Math.max(0, this.max - noticeBytes));
      // Start at a line, unless the tail is one line: half a line reads as garbage.
      const nl = kept.indexOf(0x0a, start);
      if (nl >= 0 && nl + 1 < kept.length && (start === 0 || kept[start - 1] !== 0x0a)) {
        start = nl + 1;
      }
      const shown = kept.length - start;
      notice = `${cutNotice(total - shown, shown)}\n`;
      const bytes = Buffer.byteLength(notice);
      if (bytes <= noticeBytes) break;
      noticeBytes = bytes;
    }
    this.cut = total - (kept.length - start);
    // A cut through a multi-byte character decodes to U+FFFD at the start: drop it.
    return (
      notice +
      kept
        .subarray(start)
        .toString('utf8')
        .replace(/^\uFFFD+/, '')
    );
  }
}

/** Keeps everything, up to `limit` bytes; past it, nothing, and `onOverflow` is called once. */
export class WholeBuffer implements Capture {
  private chunks: Buffer[] = [];
  private size = 0;
  overflow = false;
  readonly cut = 0;

  constructor(
    private readonly limit: number,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflow) return;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.overflow = true;
      this.chunks = [];
      this.onOverflow();
      return;
    }
    this.chunks.push(chunk);
  }

  text(): string {
    return this.bytes().toString('utf8');
  }

  bytes(): Buffer {
    return this.overflow ? Buffer.alloc(0) : Buffer.concat(this.chunks);
  }
}

/** Splits a byte stream into lines (without the terminator) for `onLine`. */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer): void {
    this.pending += this.decoder.write(chunk);
    let nl = this.pending.indexOf('\n');
    while (nl >= 0) {
      this.emit(this.pending.slice(0, nl).replace(/\r$/, ''));
      this.pending = this.pending.slice(nl + 1);
      nl = this.pending.indexOf('\n');
    }
    // A stream that never ends a line must not grow without bound: hand it over in pieces.
    if (this.pending.length > MAX_LINE_CHARS) {
      this.emit(this.pending);
      this.pending = '';
    }
  }

  end(): void {
    this.pending += this.decoder.end();
    if (this.pending !== '') this.emit(this.pending.replace(/\r$/, ''));
    this.pending = '';
  }
}
