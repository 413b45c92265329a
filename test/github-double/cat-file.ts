/**
 * Reads from a bare repository through one long-running `git cat-file --batch-command`
 * instead of a git process per read: the double answers most REST and GraphQL reads
 * (refs, `<rev>:<path>` lookups, commits, blobs) from it, and a run of the tests makes
 * about twelve thousand of them.
 *
 * Each name is resolved when its command is read, as `git rev-parse` would resolve it:
 * refs are read from disk every time (a push or a ref update by another process is seen
 * by the next command), and an object missing from the packs git knows makes it look
 * again, so objects written by other processes are found too. Commands are answered in
 * order, one at a time.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface CatFileObject {
  readonly sha: string;
  readonly type: string;
  readonly size: number;
  /** The object's bytes (for `contents`; empty for `info`). */
  readonly content: Buffer;
}

interface Waiting {
  readonly withContent: boolean;
  readonly resolve: (o: CatFileObject | undefined) => void;
  readonly reject: (e: Error) => void;
}

/** While a command waits for its answer the test process waits too; else the reader keeps nothing alive. */
function hold(child: ChildProcessWithoutNullStreams, busy: boolean): void {
  // The pipes are sockets: each keeps the event loop alive while referenced.
  const handles = [child, child.stdin, child.stdout, child.stderr] as unknown as {
    ref(): void;
    unref(): void;
  }[];
  for (const handle of handles) {
    if (busy) handle.ref();
    else handle.unref();
  }
}

export class CatFile {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly waiting: Waiting[] = [];
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly dir: string,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  /** Type and size of the object `name` resolves to, or undefined when there is none. */
  info(name: string): Promise<CatFileObject | undefined> {
    return this.ask('info', name);
  }

  /** The object `name` resolves to, with its bytes, or undefined when there is none. */
  contents(name: string): Promise<CatFileObject | undefined> {
    return this.ask('contents', name);
  }

  close(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }

  private ask(command: 'info' | 'contents', name: string): Promise<CatFileObject | undefined> {
    // A name cannot hold a line break; nothing could resolve it.
    if (name.includes('\n') || name.length === 0) return Promise.resolve(undefined);
    const child = this.started();
    return new Promise((resolve, reject) => {
      this.waiting.push({ withContent: command === 'contents', resolve, reject });
      hold(child, true);
      child.stdin.write(`${command} ${name}\n`);
    });
  }

  private started(): ChildProcessWithoutNullStreams {
    if (this.child !== undefined) return this.child;
    const child = spawn('git', ['cat-file', '--batch-command'], {
      cwd: this.dir,
      env: this.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.pending = Buffer.alloc(0);
    child.stdout.on('data', (chunk: Buffer) => {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      this.answer();
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.stdin.on('error', () => undefined);
    const fail = (why: string): void => {
      if (this.child === child) this.child = undefined;
      const error = new Error(`git cat-file in ${this.dir} ${why}: ${stderr.trim()}`);
      for (const w of this.waiting.splice(0)) w.reject(error);
    };
    child.on('error', (e) => fail(e.message));
    child.on('close', (code, signal) => fail(`ended (${signal ?? String(code)})`));
    hold(child, false);
    return child;
  }

  /** Takes every complete answer off the output, in the order the commands were sent. */
  private answer(): void {
    for (;;) {
      const w = this.waiting[0];
      if (w === undefined) return;
      const eol = this.pending.indexOf(0x0a);
      if (eol < 0) return;
      const header = this.pending.subarray(0, eol).toString('utf8');
      const m = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(header);
      let object: CatFileObject | undefined;
      let used = eol + 1;
      if (m !== null) {
        const size = Number(m[3]);
        let content = Buffer.alloc(0);
        if (w.withContent) {
          // The bytes, then a line feed.
          if (this.pending.length < used + size + 1) return;
          content = Buffer.from(this.pending.subarray(used, used + size));
          used += size + 1;
        }
        object = { sha: m[1] ?? '', type: m[2] ?? '', size, content };
      }
      // Otherwise "<name> missing" or "<name> ambiguous": nothing by that name.
      this.pending = this.pending.subarray(used);
      this.waiting.shift();
      if (this.waiting.length === 0 && this.child !== undefined) hold(this.child, false);
      w.resolve(object);
    }
  }
}
