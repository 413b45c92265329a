/** Real git repositories in temp folders, built with plain git (not the adapter under test). */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const FIXTURE_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  LC_ALL: 'C',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.com',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.com',
};

export const IDENTITY = { name: 'Epicflow Test', email: 'epicflow-test@example.com' };

export interface Fixture {
  readonly dir: string;
  git(...args: string[]): string;
  write(path: string, text: string): void;
  commitAll(message: string): string;
  cleanup(): void;
}

export function fixtureIn(dir: string): Fixture {
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], {
      cwd: dir,
      env: FIXTURE_ENV,
      encoding: 'utf8',
      maxBuffer: 1024 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  return {
    dir,
    git,
    write(path, text) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    },
    commitAll(message) {
      git('add', '-A');
      git('commit', '-q', '-m', message);
      return git('rev-parse', 'HEAD').trim();
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A repository on `main` with one commit holding `files`. */
export function makeRepo(files: Record<string, string> = { 'README.md': 'hello\n' }): Fixture {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'epicflow-git-')));
  const repo = join(dir, 'repo');
  mkdirSync(repo);
  const f = fixtureIn(repo);
  f.git('init', '-q', '-b', 'main');
  for (const [path, text] of Object.entries(files)) f.write(path, text);
  f.commitAll('initial');
  return { ...f, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function plumbing(f: Fixture, args: string[], input: string, env: Record<string, string> = {}) {
  return execFileSync('git', args, {
    cwd: f.dir,
    env: { ...FIXTURE_ENV, ...env },
    encoding: 'utf8',
    input,
    maxBuffer: 1024 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  }).trim();
}

/** Stores `text` as a blob; returns its sha. */
export function storeBlob(f: Fixture, text: string): string {
  return plumbing(f, ['hash-object', '-w', '--stdin'], text);
}

/**
 * A commit whose tree holds exactly `files` (path → blob sha), written with
 * `update-index --index-info` into a private index: tens of thousands of files
 * in four git processes, nothing checked out.
 */
export function commitFiles(
  f: Fixture,
  files: ReadonlyMap<string, string>,
  message: string,
  parent?: string,
): string {
  const index = join(f.dir, '.git', `fixture-index-${process.pid}-${Date.now()}`);
  try {
    const lines = [...files].map(([path, sha]) => `100644 ${sha}\t${path}\n`).join('');
    plumbing(f, ['update-index', '--add', '--index-info'], lines, { GIT_INDEX_FILE: index });
    const tree = plumbing(f, ['write-tree'], '', { GIT_INDEX_FILE: index });
    const args = ['commit-tree', tree, '-m', message, ...(parent ? ['-p', parent] : [])];
    return plumbing(f, args, '');
  } finally {
    rmSync(index, { force: true });
  }
}
