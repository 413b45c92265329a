/**
 * The perimeter at scale, for `engine-overhead`: a story of 50,000 changed
 * files (and one outside its perimeter) in a repository of 100,000.
 * `generateScaleRepo` builds it with git plumbing (a private index, no
 * checkout); `measureScale` then runs in a process of its own
 * (`node --import tsx bench/perimeter-scale.ts REPO BASE`), so that the peak
 * resident memory it prints is that of epicflow's git adapter alone: the
 * worktree, `changedPaths` and `restorePaths` (the one stray path, then all
 * 50,000), whose git output is megabytes, all read.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Git } from '../src/adapters/git/git.js';

export const SCALE_FILES = 100_000;
export const SCALE_CHANGED = 50_000;

function git(cwd: string, args: string[], input = '', env: Record<string, string> = {}): string {
  return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    input,
    maxBuffer: 1024 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

const path = (i: number): string =>
  `packages/p${Math.floor(i / 1000)}/src/generated/module-${String(i).padStart(6, '0')}.ts`;
/** The one changed file the perimeter does not own (it owns the even modules). */
export const OUTSIDE = path(SCALE_FILES / 2 + 1);
const owned = (p: string): boolean => /module-\d*[02468]\.ts$/.test(p);

/** A commit of exactly `files` (path → blob), through a private index. */
function commitFiles(repo: string, files: ReadonlyMap<string, string>, parent?: string): string {
  const index = join(repo, '.git', 'bench-index');
  rmSync(index, { force: true });
  const lines = [...files].map(([p, sha]) => `100644 ${sha}\t${p}\n`).join('');
  git(repo, ['update-index', '--add', '--index-info'], lines, { GIT_INDEX_FILE: index });
  const tree = git(repo, ['write-tree'], '', { GIT_INDEX_FILE: index }).trim();
  rmSync(index, { force: true });
  return git(repo, ['commit-tree', tree, '-m', 'bench', ...(parent ? ['-p', parent] : [])]).trim();
}

/** The repository at `repo`, with branch `story`; returns the base commit and the output sizes. */
export function generateScaleRepo(repo: string): {
  base: string;
  rawBytes: number;
  lsTreeBytes: number;
} {
  mkdirSync(repo, { recursive: true });
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['config', 'user.name', 'Bench']);
  git(repo, ['config', 'user.email', 'bench@example.com']);
  const before = git(repo, ['hash-object', '-w', '--stdin'], 'before\n').trim();
  const after = git(repo, ['hash-object', '-w', '--stdin'], 'after\n').trim();
  const files = new Map<string, string>();
  for (let i = 0; i < SCALE_FILES; i++) files.set(path(i), before);
  const base = commitFiles(repo, files);
  for (let i = 0; i < 2 * SCALE_CHANGED; i += 2) files.set(path(i), after);
  files.set(OUTSIDE, after);
  const head = commitFiles(repo, files, base);
  git(repo, ['branch', 'story', head]);
  return {
    base,
    rawBytes: git(repo, ['diff', '--raw', '-z', '--no-abbrev', `${base}...${head}`]).length,
    lsTreeBytes: git(repo, ['ls-tree', '-r', '-z', '--full-tree', base]).length,
  };
}

/** Wall time of `work`, and the peak resident memory of this process once it is done. */
async function step<T>(work: () => Promise<T>): Promise<{ ms: number; rssMb: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, rssMb: process.resourceUsage().maxRSS / 1024, value };
}

/** Prints the table; run in a fresh process. */
async function measureScale(repo: string, base: string): Promise<void> {
  const startMb = process.resourceUsage().maxRSS / 1024;
  const g = await Git.open(repo, { name: 'Bench', email: 'bench@example.com' });
  const tree = `${repo}-story`;
  const checkout = await step(() => g.addWorktree(tree, 'story'));
  const story = g.worktree(tree);
  const changed = await step(() => story.changedPaths(base));
  const strays = changed.value.filter((c) => !owned(c.path)).map((c) => c.path);
  const one = await step(() => story.restorePaths(base, strays));
  await story.commitAll('put back the stray');
  const all = changed.value.filter((c) => owned(c.path)).map((c) => c.path);
  const every = await step(() => story.restorePaths(base, all));
  await story.commitAll('put everything back');
  const left = await story.changedPaths(base);

  const n = (x: number): string => x.toLocaleString('en');
  console.log(`peak RSS of the process before (node, tsx, modules): ${startMb.toFixed(0)} MB`);
  console.log('');
  console.log('| operation | time | peak RSS of the process so far |');
  console.log('| --- | --- | --- |');
  const row = (what: string, m: { ms: number; rssMb: number }): void =>
    console.log(`| ${what} | ${(m.ms / 1000).toFixed(2)} s | ${m.rssMb.toFixed(0)} MB |`);
  row(`worktree add (checkout of ${n(SCALE_FILES)} files, for reference)`, checkout);
  row(`changedPaths (${n(changed.value.length)} paths)`, changed);
  row(`restorePaths, the ${strays.length} path outside the perimeter`, one);
  row(`restorePaths, all ${n(all.length)} changed paths it owns`, every);
  console.log('');
  console.log(
    `found outside the perimeter: ${strays.join(', ')}; changed after restoring everything: ${left.length}`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [repo, base] = process.argv.slice(2);
  if (repo === undefined || base === undefined) {
    throw new Error('usage: perimeter-scale.ts REPO BASE');
  }
  await measureScale(repo, base);
}
