import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStateStore } from '../../../src/adapters/state/file-store.js';
import { describeError, isEpicflowError } from '../../../src/core/errors.js';
import type { StoryRecord } from '../../../src/core/model.js';

let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'epicflow-state-'));
  dir = join(root, 'epicflow', '42');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function record(story: string, extra: Partial<StoryRecord> = {}): StoryRecord {
  return {
    version: 1,
    epic: '42',
    story,
    planHash: 'abc123',
    status: 'active',
    branch: `story/42/${story}`,
    attempt: 1,
    executors: ['codex'],
    usage: [
      {
        executor: 'codex',
        model: 'gpt-5',
        tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 },
        measured: true,
        costUsd: null,
        costSource: 'none',
      },
    ],
    notes: [],
    timings: { code: 1200 },
    ...extra,
  };
}

async function allFiles(d: string): Promise<string[]> {
  const entries = await readdir(d, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
}

describe('FileStateStore', () => {
  it('writes and reads story records, leaving no temp files', async () => {
    const store = new FileStateStore(dir);
    expect(await store.readStory('api')).toBeNull();
    expect(await store.listStories()).toEqual([]);
    const a = record('api', { reason: 'no changes', mergeCommit: 'f00', status: 'failed' });
    await store.writeStory(a);
    await store.writeStory(record('db'));
    await store.writeStory({ ...a, attempt: 2 });
    expect(await store.readStory('api')).toEqual({ ...a, attempt: 2 });
    expect((await store.listStories()).map((r) => r.story)).toEqual(['api', 'db']);
    expect(await allFiles(dir)).toEqual(['api.json', 'db.json']);
    // Human-readable on disk.
    expect(await readFile(join(dir, 'stories', 'api.json'), 'utf8')).toContain(
      '\n  "story": "api",\n',
    );
  });

  it('names the corrupt file and the field', async () => {
    const store = new FileStateStore(dir);
    await mkdir(join(dir, 'stories'), { recursive: true });
    const path = join(dir, 'stories', 'api.json');
    await writeFile(path, '{"version": 1, "story": ');
    const err = await store.readStory('api').catch((e: unknown) => e);
    expect(isEpicflowError(err, 'state')).toBe(true);
    expect((err as Error).message).toBe(`corrupt state file ${path}: not valid JSON`);

    await writeFile(path, JSON.stringify({ ...record('api'), status: 'finished', attempt: 0 }));
    const err2 = await store.readStory('api').catch((e: unknown) => e);
    expect((err2 as Error).message).toBe(`corrupt state file ${path}: not a story record`);
    const text = describeError(err2);
    expect(text).toContain('  status: ');
    expect(text).toContain('  attempt: ');
    await expect(store.listStories()).rejects.toThrow(path);
  });

  it('keeps JSON documents, text files and an event log', async () => {
    const store = new FileStateStore(dir);
    expect(await store.readJson('roster.json')).toBeNull();
    await store.writeJson('roster.json', { excluded: { codex: '2026-01-01T00:00:00Z' } });
    expect(await store.readJson('roster.json')).toEqual({
      excluded: { codex: '2026-01-01T00:00:00Z' },
    });
    const path = await store.writeText('board.md', '# Board\n');
    expect(path).toBe(join(dir, 'board.md'));
    expect(await readFile(path, 'utf8')).toBe('# Board\n');
    await store.appendEvent({ type: 'started', story: 'api' });
    await store.appendEvent({ type: 'done', story: 'api' });
    const lines = (await readFile(join(dir, 'events.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { type: 'started', story: 'api' },
      { type: 'done', story: 'api' },
    ]);
    expect(await allFiles(dir)).toEqual(['board.md', 'events.jsonl', 'roster.json']);
    await expect(store.writeText('../escape.md', 'x')).rejects.toThrow('invalid state file name');
    await expect(store.readStory('../x')).rejects.toThrow('invalid story id');
  });

  it('refuses to append through a link planted at events.jsonl or a log, writing nothing through it', async () => {
    const store = new FileStateStore(dir);
    await mkdir(join(dir, 'logs'), { recursive: true });
    const target = join(root, 'victim.txt');
    await writeFile(target, 'untouched\n');
    await symlink(target, join(dir, 'events.jsonl'));
    await symlink(target, join(dir, 'logs', 'live.log'));
    const event = store.appendEvent({ kind: 'x' });
    await expect(event).rejects.toThrow(
      `refusing to append to ${join(dir, 'events.jsonl')}: ${join(dir, 'events.jsonl')} is a symbolic link`,
    );
    await expect(event).rejects.toMatchObject({ tag: 'state' });
    await expect(store.appendText('logs/live.log', 'x\n')).rejects.toThrow('is a symbolic link');
    // A link at a folder on the way is refused as well.
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, join(dir, 'runs'));
    await expect(store.appendText('runs/live.log', 'x\n')).rejects.toThrow(
      `${join(dir, 'runs')} is a symbolic link, not epicflow's own folder`,
    );
    expect(await readFile(target, 'utf8')).toBe('untouched\n');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('holds an exclusive lock until released', async () => {
    const store = new FileStateStore(dir);
    const release = await store.lock();
    const err = await new FileStateStore(dir).lock().catch((e: unknown) => e);
    expect(isEpicflowError(err, 'state')).toBe(true);
    expect(describeError(err)).toBe(
      `this epic is already running: lock file ${join(dir, 'lock')} is held\n  held by process ${process.pid} on ${hostname()}`,
    );
    await release();
    const again = await store.lock();
    await again();
    expect(await allFiles(dir)).toEqual([]);
  });

  it('lets exactly one of two racing runs take the lock', async () => {
    const results = await Promise.allSettled([
      new FileStateStore(dir).lock(),
      new FileStateStore(dir).lock(),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('takes over a stale lock left by a dead process', async () => {
    // A pid that surely existed and is now gone: a child that already exited.
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const deadPid = Number(child.stdout);
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'lock'),
      JSON.stringify({ pid: deadPid, host: hostname(), token: 'old' }),
    );
    const store = new FileStateStore(dir);
    const release = await store.lock();
    expect(JSON.parse(await readFile(join(dir, 'lock'), 'utf8'))).toMatchObject({
      pid: process.pid,
    });
    await release();
  });
});
