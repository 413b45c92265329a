/**
 * Durable local state of one epic: one JSON record per story, small JSON
 * documents (roster exclusions…), an event log, rendered text (board, report)
 * and an exclusive run lock. Every write is atomic (temp file in the same
 * folder, fsync, rename), so a crash leaves either the old or the new file.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import type { StoryRecord } from '../../core/model.js';
import { StoryRecordSchema } from '../../core/record-schema.js';

const STORY_ID = /^[a-z0-9][a-z0-9-]*$/;
const LOCK_FILE = 'lock';

function checkName(name: string): void {
  if (
    name === '' ||
    isAbsolute(name) ||
    name.split(/[/\\]/).some((s) => s === '..' || s === '' || s === '.') ||
    name.includes('\0')
  ) {
    throw new EpicflowError('internal', `invalid state file name: ${JSON.stringify(name)}`);
  }
}

function errnoCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Writes a file atomically: temp file beside it, fsync, rename over (whole or untouched). */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', 0o644);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } catch (e) {
    await handle.close();
    await rm(tmp, { force: true });
    throw e;
  }
  await handle.close();
  try {
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * Appends `text` to `path` (created 0644 when missing) without following a symbolic link:
 * neither at `path` itself (`O_NOFOLLOW`) nor at a folder between `root` and it. A link
 * planted where epicflow appends (`events.jsonl`, a log) is refused with an error naming
 * it, and nothing is written through it.
 */
async function appendNoFollow(root: string, path: string, text: string): Promise<void> {
  const parts = path
    .slice(root.length + 1)
    .split('/')
    .slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const folder = join(root, ...parts.slice(0, i));
    if ((await lstat(folder)).isSymbolicLink()) throw plantedLink(path, folder);
  }
  let handle;
  try {
    handle = await open(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o644,
    );
  } catch (e) {
    if (errnoCode(e) === 'ELOOP') throw plantedLink(path, path);
    throw e;
  }
  try {
    await handle.appendFile(text, 'utf8');
  } finally {
    await handle.close();
  }
}

function plantedLink(path: string, link: string): EpicflowError {
  return new EpicflowError(
    'state',
    `refusing to append to ${path}: ${link} is a symbolic link, not epicflow's own ${link === path ? 'file' : 'folder'}`,
    { details: [`nothing was written through it; remove ${link} and run again`] },
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return errnoCode(e) === 'EPERM';
  }
}

export class FileStateStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  private storyPath(id: string): string {
    if (!STORY_ID.test(id)) {
      throw new EpicflowError(
        'internal',
        `invalid story id for a state file: ${JSON.stringify(id)}`,
      );
    }
    return join(this.dir, 'stories', `${id}.json`);
  }

  private async readText(path: string): Promise<string | null> {
    try {
      return await readFile(path, 'utf8');
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return null;
      throw new EpicflowError('state', `cannot read state file ${path}`, {
        details: [String((e as Error).message)],
        cause: e,
      });
    }
  }

  private async write(path: string, text: string): Promise<void> {
    try {
      await mkdir(join(path, '..'), { recursive: true });
      await writeFileAtomic(path, text);
    } catch (e) {
      throw new EpicflowError('state', `cannot write state file ${path}`, {
        details: [String((e as Error).message)],
        cause: e,
      });
    }
  }

  private parseJson(path: string, text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new EpicflowError('state', `corrupt state file ${path}: not valid JSON`, {
        details: [String((e as Error).message), 'delete the file to start that part over'],
      });
    }
  }

  async readStory(id: string): Promise<StoryRecord | null> {
    const path = this.storyPath(id);
    const text = await this.readText(path);
    if (text === null) return null;
    const parsed = StoryRecordSchema.safeParse(this.parseJson(path, text));
    if (!parsed.success) {
      throw new EpicflowError('state', `corrupt state file ${path}: not a story record`, {
        details: [
          ...parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
          'delete the file to start that story over',
        ],
      });
    }
    return parsed.data;
  }

  async writeStory(record: StoryRecord): Promise<void> {
    await this.write(this.storyPath(record.story), `${JSON.stringify(record, null, 2)}\n`);
  }

  /** Every story record, in id order. */
  async listStories(): Promise<StoryRecord[]> {
    let names: string[];
    try {
      names = await readdir(join(this.dir, 'stories'));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return [];
      throw new EpicflowError('state', `cannot list story records in ${this.dir}`, { cause: e });
    }
    const ids = names
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter((id) => STORY_ID.test(id))
      .sort();
    const records: StoryRecord[] = [];
    for (const id of ids) {
      const r = await this.readStory(id);
      if (r) records.push(r);
    }
    return records;
  }

  async readJson<T>(name: string): Promise<T | null> {
    checkName(name);
    const path = join(this.dir, name);
    const text = await this.readText(path);
    return text === null ? null : (this.parseJson(path, text) as T);
  }

  async writeJson(name: string, value: unknown): Promise<void> {
    checkName(name);
    await this.write(join(this.dir, name), `${JSON.stringify(value, null, 2)}\n`);
  }

  /** Appends one line to `events.jsonl` (a single O_APPEND write, never through a link). */
  async appendEvent(event: object): Promise<void> {
    const path = join(this.dir, 'events.jsonl');
    try {
      await mkdir(this.dir, { recursive: true });
      await appendNoFollow(this.dir, path, `${JSON.stringify(event)}\n`);
    } catch (e) {
      if (e instanceof EpicflowError) throw e;
      throw new EpicflowError('state', `cannot append to ${path}`, { cause: e });
    }
  }

  /** Appends text to a file (made with its folder when missing), never through a link. */
  async appendText(name: string, text: string): Promise<void> {
    checkName(name);
    const path = join(this.dir, name);
    try {
      await mkdir(dirname(path), { recursive: true });
      await appendNoFollow(this.dir, path, text);
    } catch (e) {
      if (e instanceof EpicflowError) throw e;
      throw new EpicflowError('state', `cannot append to ${path}`, { cause: e });
    }
  }

  /** Writes a text file atomically and returns its path. */
  async writeText(name: string, text: string): Promise<string> {
    checkName(name);
    const path = join(this.dir, name);
    await this.write(path, text);
    return path;
  }

  /** Whether a run holds the epic's lock now: a lock left by a dead process on this host is not held. */
  async lockHeld(): Promise<boolean> {
    const held = await this.readText(join(this.dir, LOCK_FILE));
    if (held === null) return false;
    const holder = parseLock(held);
    return !(holder && holder.host === hostname() && !isAlive(holder.pid));
  }

  /**
   * Takes the epic's exclusive lock; resolves to its release function. A lock
   * left by a dead process on this host is taken over; a live one is an error.
   */
  async lock(): Promise<() => Promise<void>> {
    const path = join(this.dir, LOCK_FILE);
    const mine = JSON.stringify({
      pid: process.pid,
      host: hostname(),
      token: randomBytes(8).toString('hex'),
    });
    await mkdir(this.dir, { recursive: true });
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const handle = await open(path, 'wx', 0o644);
        try {
          await handle.writeFile(mine, 'utf8');
          await handle.sync();
        } finally {
          await handle.close();
        }
        return async () => {
          // Release only a lock that is still ours.
          if ((await this.readText(path)) === mine) await rm(path, { force: true });
        };
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') {
          throw new EpicflowError('state', `cannot create lock file ${path}`, { cause: e });
        }
      }
      const held = await this.readText(path);
      if (held === null) continue; // released meanwhile
      const holder = parseLock(held);
      if (holder && holder.host === hostname() && !isAlive(holder.pid)) {
        // Stale: re-check just before removing, so a fresh lock is not stolen.
        if ((await this.readText(path)) === held) await rm(path, { force: true });
        continue;
      }
      throw new EpicflowError('state', `this epic is already running: lock file ${path} is held`, {
        details: [
          holder
            ? `held by process ${holder.pid} on ${holder.host}`
            : 'the lock file is unreadable; delete it if no epicflow run is active',
        ],
      });
    }
    throw new EpicflowError('state', `cannot take the lock file ${path}`);
  }
}

function parseLock(text: string): { pid: number; host: string } | null {
  try {
    const v = JSON.parse(text) as { pid?: unknown; host?: unknown };
    if (
      typeof v.pid === 'number' &&
      Number.isInteger(v.pid) &&
      v.pid > 0 &&
      typeof v.host === 'string'
    ) {
      return { pid: v.pid, host: v.host };
    }
  } catch {
    // unreadable
  }
  return null;
}
