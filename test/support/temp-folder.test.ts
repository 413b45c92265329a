/**
 * The tests' temporary folder: in memory where the machine has a memory-backed `/dev/shm`,
 * the one a contributor names, or the system's own.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownFolder, testTempFolder } from './temp-folder.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function fresh(): string {
  const dir = mkdtempSync(join(tmpdir(), 'temp-folder-'));
  made.push(dir);
  return dir;
}

/** A memory-backed mount point of this machine the tests may write in, if any. */
function memoryMount(): string | undefined {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .find(([, at, type]) => type === 'tmpfs' && at === '/dev/shm')?.[1];
}

describe('the tests’ temporary folder', () => {
  it('is the system’s own with EPICFLOW_TEST_TMPDIR=system', () => {
    expect(testTempFolder({ EPICFLOW_TEST_TMPDIR: 'system' })).toBeNull();
  });

  it('is the folder EPICFLOW_TEST_TMPDIR names, made when missing', () => {
    const dir = join(fresh(), 'mine', 'tmp');
    expect(testTempFolder({ EPICFLOW_TEST_TMPDIR: dir })).toBe(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  it('is the system’s own where the folder to use is not a memory-backed mount', () => {
    expect(testTempFolder({}, fresh())).toBeNull();
  });

  it('is a folder of this user in /dev/shm, open to all and sticky as /tmp, where that is in memory', () => {
    const shm = memoryMount();
    expect(shm).toBe('/dev/shm'); // every Linux machine the suite runs on has one
    const dir = testTempFolder({}, shm, 0);
    expect(dir).toBe(`/dev/shm/epicflow-tests-${process.getuid?.() ?? 0}`);
    expect(statSync(dir ?? '').mode & 0o7777).toBe(0o1777);
  });

  it('is the system’s own where /dev/shm has too little room', () => {
    expect(testTempFolder({}, memoryMount(), Number.MAX_SAFE_INTEGER)).toBeNull();
  });

  it('refuses a folder that is there as a link, naming the way out', () => {
    const top = fresh();
    symlinkSync(fresh(), join(top, 'link'));
    expect(() => ownFolder(join(top, 'link'))).toThrow(
      /is not a folder of uid \d+: .*EPICFLOW_TEST_TMPDIR/,
    );
  });
});
