/**
 * The setup cache on disk, on real folders: what is kept of a checkout after setup, and
 * how it is put back into another checkout (never over the commit's files, never through
 * a link the commit holds, never shared with the cache).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setupCacheDir } from '../../../src/adapters/state/setup-cache.js';

let tmp: string;
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const KEY = 'ab'.repeat(32);

/** A checkout holding the commit's `package.json` and what setup made beside it. */
function setUp(): { cache: string; tree: string; outside: string } {
  tmp = mkdtempSync(join(tmpdir(), 'epicflow-setup-cache-'));
  const tree = join(tmp, 'tree');
  const outside = join(tmp, 'outside.txt');
  writeFileSync(outside, 'outside\n');
  mkdirSync(join(tree, 'node_modules', 'pkg', 'bin'), { recursive: true });
  mkdirSync(join(tree, '.git'));
  writeFileSync(join(tree, '.git', 'HEAD'), 'ref\n');
  writeFileSync(join(tree, 'package.json'), '{}\n');
  writeFileSync(join(tree, 'node_modules', 'pkg', 'index.js'), 'module.exports = 1;\n');
  writeFileSync(join(tree, 'node_modules', 'pkg', 'bin', 'run'), '#!/bin/sh\n', { mode: 0o755 });
  // Set-user-ID, as setup may leave it: never kept as such.
  chmodSync(join(tree, 'node_modules', 'pkg', 'bin', 'run'), 0o4755);
  mkdirSync(join(tree, 'node_modules', '.bin'));
  symlinkSync('../pkg/bin/run', join(tree, 'node_modules', '.bin', 'run'));
  symlinkSync(outside, join(tree, 'node_modules', 'abs'));
  symlinkSync('../../..', join(tree, 'node_modules', 'up'));
  return { cache: join(tmp, 'cache'), tree, outside };
}

describe('setup cache folder', () => {
  it('keeps what the commit does not track, with modes, and every link as a link (never what it leads to); git’s folder is left out', async () => {
    const { cache, tree, outside } = setUp();
    const port = setupCacheDir(cache);
    await port.store(KEY, tree, new Set(['package.json']));
    const entry = join(cache, KEY);
    expect(readdirSync(cache)).toEqual([KEY]);
    expect(existsSync(join(entry, 'package.json'))).toBe(false);
    expect(existsSync(join(entry, '.git'))).toBe(false);
    expect(readFileSync(join(entry, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe(
      'module.exports = 1;\n',
    );
    expect(statSync(join(entry, 'node_modules', 'pkg', 'bin', 'run')).mode & 0o7777).toBe(0o755);
    expect(readlinkSync(join(entry, 'node_modules', '.bin', 'run'))).toBe('../pkg/bin/run');
    // A link out of the checkout stays a link (a virtual environment's `bin/python`): the
    // file it leads to is never copied.
    expect(lstatSync(join(entry, 'node_modules', 'abs')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(entry, 'node_modules', 'abs'))).toBe(outside);
    expect(readlinkSync(join(entry, 'node_modules', 'up'))).toBe('../../..');
    expect(lstatSync(join(entry, 'node_modules')).isDirectory()).toBe(true);
  });

  it('puts a copy back: a write in the checkout does not reach the cache; nothing of the commit is replaced or written through', async () => {
    const { cache, tree, outside } = setUp();
    const port = setupCacheDir(cache);
    await port.store(KEY, tree, new Set(['package.json']));
    // Another commit: its own `node_modules/pkg/index.js`, and `node_modules/.bin` a link out.
    const next = join(tmp, 'next');
    const elsewhere = join(tmp, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(join(next, 'node_modules', 'pkg'), { recursive: true });
    writeFileSync(join(next, 'node_modules', 'pkg', 'index.js'), 'committed\n');
    symlinkSync(elsewhere, join(next, 'node_modules', '.bin'));
    expect(await port.restore(KEY, next)).toBe(true);
    expect(readlinkSync(join(next, 'node_modules', 'abs'))).toBe(outside);
    expect(readFileSync(join(next, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('committed\n');
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readFileSync(join(next, 'node_modules', 'pkg', 'bin', 'run'), 'utf8')).toBe(
      '#!/bin/sh\n',
    );
    // The copy is the checkout's own: writing it leaves the cache as setup made it.
    writeFileSync(join(next, 'node_modules', 'pkg', 'bin', 'run'), 'changed by a gate\n');
    expect(readFileSync(join(cache, KEY, 'node_modules', 'pkg', 'bin', 'run'), 'utf8')).toBe(
      '#!/bin/sh\n',
    );
    expect(statSync(join(next, 'node_modules', 'pkg', 'bin', 'run')).nlink).toBe(1);
    expect(readFileSync(outside, 'utf8')).toBe('outside\n');
  });

  it('a key never kept restores nothing; a second store of the same key leaves the first', async () => {
    const { cache, tree } = setUp();
    const port = setupCacheDir(cache);
    expect(await port.restore(KEY, join(tmp, 'none'))).toBe(false);
    await port.store(KEY, tree, new Set());
    writeFileSync(join(tree, 'node_modules', 'pkg', 'index.js'), 'second\n');
    await port.store(KEY, tree, new Set());
    expect(readdirSync(cache)).toEqual([KEY]);
    expect(readFileSync(join(cache, KEY, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe(
      'module.exports = 1;\n',
    );
  });
});
