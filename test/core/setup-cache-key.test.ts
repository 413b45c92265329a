/**
 * The setup cache's key: the setup commands and the lockfiles' bytes, and for Python the
 * checkout's path (a virtual environment's scripts and an editable install name the folder
 * setup ran in).
 */
import { describe, expect, it } from '@jest/globals';
import { boundToPlace, isLockfile, setupCacheKey } from '../../src/core/setup-cache.js';

const SETUP = [{ dir: '.', command: 'npm ci', label: 'npm ci' }];
const file = (path: string, text: string) => ({ path, content: new TextEncoder().encode(text) });

describe('setupCacheKey', () => {
  const lock = [file('package-lock.json', '{"v":1}')];

  it('no setup or no lockfile: no key', () => {
    expect(setupCacheKey([], lock)).toBeNull();
    expect(setupCacheKey(SETUP, [])).toBeNull();
  });

  it('the setup commands and the lockfiles’ bytes; the path only where bound to it', () => {
    const key = setupCacheKey(SETUP, lock);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(setupCacheKey(SETUP, [file('package-lock.json', '{"v":2}')])).not.toBe(key);
    expect(
      setupCacheKey([{ dir: '.', command: 'npm install', label: 'npm install' }], lock),
    ).not.toBe(key);
    const base = setupCacheKey(SETUP, lock, '/w/_base');
    expect(base).not.toBe(key);
    expect(setupCacheKey(SETUP, lock, '/w/_base')).toBe(base);
    expect(setupCacheKey(SETUP, lock, '/w/a.checks')).not.toBe(base);
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
