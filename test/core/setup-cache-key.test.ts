/**
 * The setup cache's key: the setup commands and the lockfiles' bytes (without any, the
 * manifests' within one epic), and for Python the checkout's path (a virtual environment's scripts and an editable install name the folder
 * setup ran in).
 */
import { describe, expect, it } from '@jest/globals';
import { boundToPlace, isLockfile, keyFiles, setupCacheKey } from '../../src/core/setup-cache.js';

const SETUP = [{ dir: '.', command: 'npm ci', label: 'npm ci' }];
const file = (path: string, text: string) => ({ path, content: new TextEncoder().encode(text) });

describe('setupCacheKey', () => {
  const lock = [file('package-lock.json', '{"v":1}')];
  const keyOf = (...args: Parameters<typeof setupCacheKey>) => setupCacheKey(...args)?.key;

  it('no setup, or no file to key on: no key', () => {
    expect(setupCacheKey([], lock)).toBeNull();
    expect(setupCacheKey(SETUP, [])).toBeNull();
    expect(setupCacheKey(SETUP, [], { epic: 'e' })).toBeNull();
  });

  it('the setup commands and the lockfiles’ bytes; the path only where bound to it', () => {
    const key = keyOf(SETUP, lock);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(setupCacheKey(SETUP, lock)?.same).toBe('same setup and lockfiles');
    expect(keyOf(SETUP, [file('package-lock.json', '{"v":2}')])).not.toBe(key);
    expect(keyOf([{ dir: '.', command: 'npm install', label: 'npm install' }], lock)).not.toBe(key);
    // Lockfiles pin what is installed: the epic makes no difference.
    expect(keyOf(SETUP, lock, { epic: 'other' })).toBe(key);
    const base = keyOf(SETUP, lock, { place: '/w/_base' });
    expect(base).not.toBe(key);
    expect(keyOf(SETUP, lock, { place: '/w/_base' })).toBe(base);
    expect(keyOf(SETUP, lock, { place: '/w/a.checks' })).not.toBe(base);
  });

  it('manifests alone (no lockfile): within one epic only, said so', () => {
    const manifest = [file('package.json', '{"devDependencies":{"ava":"^3"}}')];
    expect(setupCacheKey(SETUP, manifest)).toBeNull();
    const key = setupCacheKey(SETUP, manifest, { epic: 'colours' });
    expect(key?.key).toMatch(/^[0-9a-f]{64}$/);
    expect(key?.same).toBe('same setup and manifests in this epic: no lockfile pins them');
    expect(keyOf(SETUP, manifest, { epic: 'colours' })).toBe(key?.key);
    expect(keyOf(SETUP, manifest, { epic: 'sizes' })).not.toBe(key?.key);
    expect(
      keyOf(SETUP, [file('package.json', '{"devDependencies":{"ava":"^4"}}')], { epic: 'colours' }),
    ).not.toBe(key?.key);
  });
});

describe('keyFiles', () => {
  it('the lockfiles, in any folder, when there are any', () => {
    expect(
      keyFiles(['package.json', 'package-lock.json', 'web/package.json', 'web/yarn.lock', 'a.js']),
    ).toEqual(['package-lock.json', 'web/yarn.lock']);
  });

  it('else the manifests, in any folder', () => {
    expect(
      keyFiles([
        'package.json',
        'readme.md',
        'packages/a/package.json',
        'go.mod',
        'api/pyproject.toml',
        'setup.py',
        'setup.cfg',
        'crates/x/Cargo.toml',
        'src/index.js',
      ]),
    ).toEqual([
      'package.json',
      'packages/a/package.json',
      'go.mod',
      'api/pyproject.toml',
      'setup.py',
      'setup.cfg',
      'crates/x/Cargo.toml',
    ]);
    expect(keyFiles(['Makefile', 'src/main.c'])).toEqual([]);
  });
});

describe('boundToPlace', () => {
  it.each([
    'requirements-dev.txt',
    'services/api/requirements.txt',
    'uv.lock',
    'poetry.lock',
    'pdm.lock',
    'pyproject.toml',
    'tools/setup.py',
  ])('a Python project (%s): bound to its checkout’s path', (path) => {
    expect(boundToPlace(['package.json', 'package-lock.json', path])).toBe(true);
  });

  it('Node, Go and Rust alone: not bound (node_modules links are relative)', () => {
    expect(boundToPlace(['package.json', 'package-lock.json', 'go.sum', 'Cargo.lock'])).toBe(false);
  });
});

describe('isLockfile', () => {
  it('by name, in any folder', () => {
    expect(['go.sum', 'web/yarn.lock', 'requirements.txt', 'x/Cargo.lock'].every(isLockfile)).toBe(
      true,
    );
    expect(['requirements/dev.txt', 'package.json', 'go.mod'].some(isLockfile)).toBe(false);
  });
});
