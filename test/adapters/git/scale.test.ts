/**
 * The perimeter and the restore at a scale where git's output is megabytes:
 * every byte of it is read. (Until it was, output was cut to its last 1 MiB, so
 * a change outside the perimeter went unseen and a restore deleted the file it
 * should have put back.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Git, type Worktree } from '../../../src/adapters/git/git.js';
import { spawnGit } from '../../../src/adapters/git/run-git.js';
import { isEpicflowError } from '../../../src/core/errors.js';
import { commitFiles, IDENTITY, makeRepo, storeBlob, type Fixture } from './repo-fixture.js';

const OWNED = 5_000;
const OTHERS = 3_000;

/**
 * Long paths, as generated code has them (about 250 bytes each): megabytes of listings
 * from 8,000 files, where shorter paths needed 20,000 (2.5 times the files to write).
 */
const GENERATED =
  'internal/handlers/generated/protocol-buffers/v1alpha1/google/cloud/payments/processing/reconciliation/settlement/batch/workers/shards/primary/region-europe-west/zone-b/partitions';
const owned = (i: number): string =>
  `owned/services/payments/${GENERATED}/module-${String(i).padStart(5, '0')}/implementation_generated_stub.ts`;
const other = (i: number): string =>
  `other/services/accounting/${GENERATED}/module-${String(i).padStart(5, '0')}/implementation_generated_stub.ts`;
/** Sort first and last in every listing git writes. */
const FIRST = 'a-first/notes.md';
const LAST = 'zz-last/notes.md';
const OUTSIDE = other(2000);

let f: Fixture;
let git: Git;
let base: string;
let story: Worktree;

beforeAll(async () => {
  f = makeRepo();
  const before = storeBlob(f, 'before\n');
  const after = storeBlob(f, 'after\n');
  const baseFiles = new Map<string, string>();
  for (let i = 0; i < OWNED; i++) baseFiles.set(owned(i), before);
  for (let i = 0; i < OTHERS; i++) baseFiles.set(other(i), before);
  baseFiles.set(FIRST, storeBlob(f, 'first notes\n'));
  baseFiles.set(LAST, storeBlob(f, 'last notes\n'));
  base = commitFiles(f, baseFiles, 'base');
  // The story changes every file it owns and one it does not, deletes the
  // first file and changes the last.
  const storyFiles = new Map(baseFiles);
  for (let i = 0; i < OWNED; i++) storyFiles.set(owned(i), after);
  storyFiles.set(OUTSIDE, after);
  storyFiles.delete(FIRST);
  storyFiles.set(LAST, after);
  const head = commitFiles(f, storyFiles, 'story', base);
  f.git('branch', 'story/1/s', head);
  git = await Git.open(f.dir, IDENTITY);
  // One checkout of 8,000 files, shared: the first test only reads it.
  const path = join(dirname(f.dir), 'wt', 's');
  await git.addWorktree(path, 'story/1/s');
  story = git.worktree(path);
}, 540_000);
afterAll(() => f.cleanup());

describe('a story of 5,000 changed files in a repository of 8,000, whose listings are megabytes', () => {
  it('writes megabytes of listings: far past what used to be kept', () => {
    const head = f.git('rev-parse', 'story/1/s').trim();
    expect(f.git('ls-tree', '-r', '-z', '--name-only', base).length).toBeGreaterThan(
      1.5 * 1024 * 1024,
    );
    expect(f.git('diff', '--raw', '-z', '--no-abbrev', `${base}...${head}`).length).toBeGreaterThan(
      1.5 * 1024 * 1024,
    );
  });

  it('sees the one change outside the perimeter', async () => {
    const changes = await story.changedPaths(base);
    expect(changes).toHaveLength(OWNED + 3);
    expect(changes.filter((c) => !c.path.startsWith('owned/'))).toEqual([
      { path: FIRST, status: 'deleted', mode: 'file' },
      { path: OUTSIDE, status: 'modified', mode: 'file' },
      { path: LAST, status: 'modified', mode: 'file' },
    ]);
  });

  it('restores files from a ref whose listing is megabytes, the first and the last', async () => {
    await story.restorePaths(base, [FIRST, OUTSIDE, LAST]);
    await story.commitAll('put back paths outside the perimeter');
    expect(readFileSync(join(story.path, FIRST), 'utf8')).toBe('first notes\n');
    expect(readFileSync(join(story.path, LAST), 'utf8')).toBe('last notes\n');
    expect(readFileSync(join(story.path, OUTSIDE), 'utf8')).toBe('before\n');
    const left = await story.changedPaths(base);
    expect(left).toHaveLength(OWNED);
    expect(left.every((c) => c.path.startsWith('owned/') && c.status === 'modified')).toBe(true);

    // Thousands of paths at once: on stdin, and without matching each path against each.
    await story.restorePaths(
      base,
      Array.from({ length: OWNED }, (_, i) => owned(i)),
    );
    await story.commitAll('put everything back');
    expect(await story.changedPaths(base)).toEqual([]);
    expect(readFileSync(join(story.path, owned(OWNED - 1)), 'utf8')).toBe('before\n');
    expect(existsSync(join(story.path, owned(0)))).toBe(true);
  });
});

describe('a git command past the output limit', () => {
  it('fails with a git error naming the limit; its output is never cut', async () => {
    const blob = storeBlob(f, 'x'.repeat(10_000));
    const small = await spawnGit(['cat-file', 'blob', blob], {
      cwd: f.dir,
      identity: undefined,
      outputLimitBytes: 10_000,
    });
    expect(small.stdout).toHaveLength(10_000);
    const err = await spawnGit(['cat-file', 'blob', blob], {
      cwd: f.dir,
      identity: undefined,
      outputLimitBytes: 9_999,
    }).catch((e: unknown) => e);
    expect(isEpicflowError(err, 'git')).toBe(true);
    expect((err as Error).message).toBe(
      `git cat-file in ${f.dir} wrote more than 9.8 KiB to stdout`,
    );
  });
});
