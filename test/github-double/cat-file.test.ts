/**
 * The double's long-running reader sees what other git processes write after it started,
 * answers in order, and keeps bytes intact.
 */
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatFile } from './cat-file.js';

const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
let dir: string;
let reader: CatFile;

function git(args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, { cwd: dir, env, input }).toString('utf8').trim();
}

function commit(content: string | Buffer, parent?: string): string {
  const blob = git(['hash-object', '-w', '--stdin'], content);
  const tree = git(['mktree'], `100644 blob ${blob}\tfile.txt\n`);
  return git([
    '-c',
    'user.name=T',
    '-c',
    'user.email=t@example.com',
    'commit-tree',
    tree,
    '-m',
    'c',
    ...(parent === undefined ? [] : ['-p', parent]),
  ]);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cat-file-'));
  git(['init', '--quiet', '--bare']);
  reader = new CatFile(dir, env);
});

afterEach(() => {
  reader.close();
  rmSync(dir, { recursive: true, force: true });
});

it('sees a ref moved and objects written by other processes after its first answer', async () => {
  const first = commit('one\n');
  git(['update-ref', 'refs/heads/main', first]);
  expect((await reader.info('refs/heads/main^{commit}'))?.sha).toBe(first);
  const second = commit('two\n', first);
  git(['update-ref', 'refs/heads/main', second]);
  expect((await reader.info('refs/heads/main^{commit}'))?.sha).toBe(second);
  expect((await reader.contents('main:file.txt'))?.content.toString()).toBe('two\n');
  // Packed refs too (as `git gc` leaves them).
  git(['pack-refs', '--all']);
  git(['update-ref', 'refs/heads/main', first]);
  git(['pack-refs', '--all']);
  expect((await reader.info('refs/heads/main'))?.sha).toBe(first);
});

it('answers many reads sent at once in order, with bytes intact and nothing for a missing name', async () => {
  const bytes = Buffer.from([0, 10, 255, 13, 10, 0, 42]);
  const withBytes = commit(bytes);
  git(['update-ref', 'refs/heads/bin', withBytes]);
  const names = ['bin:file.txt', 'refs/heads/nope', 'bin', 'bin:missing.txt', 'bin^{tree}'];
  const answers = await Promise.all(
    [...names, ...names].map((n, i) => (i % 2 === 0 ? reader.contents(n) : reader.info(n))),
  );
  const types = answers.map((a) => a?.type);
  expect(types).toEqual([
    'blob',
    undefined,
    'commit',
    undefined,
    'tree',
    'blob',
    undefined,
    'commit',
    undefined,
    'tree',
  ]);
  expect(answers[0]?.content).toEqual(bytes);
  expect(answers[5]?.size).toBe(bytes.length);
  expect(await reader.info('line\nbreak')).toBeUndefined();
});
