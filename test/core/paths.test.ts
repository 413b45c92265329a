import { describe, expect, it } from '@jest/globals';
import {
  excludePattern,
  isProtectedPath,
  isWithin,
  normalisePath,
  foldFolders,
  overlaps,
  someOf,
  unsafePathReason,
} from '../../src/core/paths.js';

describe('normalisePath', () => {
  it.each([
    ['src/api', 'src/api'],
    ['  src/api  ', 'src/api'],
    ['./src/', 'src'],
    ['././src/api/', 'src/api'],
    ['src\\win', 'src/win'],
    ['.\\src\\win\\', 'src/win'],
    ['src//api///', 'src/api'],
    ['.', '.'],
    ['./', '.'],
    ['/', '/'],
    ['/etc/passwd', '/etc/passwd'],
    ['', ''],
  ])('%j → %j', (input, expected) => {
    expect(normalisePath(input)).toBe(expected);
  });
});

describe('isWithin and overlaps', () => {
  it.each([
    ['src/api', 'src/api', true],
    ['src/api/x.ts', 'src/api', true],
    ['src/api-client/x.ts', 'src/api', false],
    ['src/api-client', 'src/api', false],
    ['src', 'src/api', false],
    ['anything/at/all', '.', true],
    ['.', '.', true],
    ['srcx', 'src', false],
  ])('%j within %j is %j', (file, prefix, expected) => {
    expect(isWithin(file, prefix)).toBe(expected);
  });

  it.each([
    ['src/api', 'src/api-client', false],
    ['src/api', 'src/api/v1', true],
    ['src/api/v1', 'src/api', true],
    ['src', 'test', false],
    ['.', 'docs', true],
    ['docs', 'docs', true],
  ])('%j overlaps %j is %j', (a, b, expected) => {
    expect(overlaps(a, b)).toBe(expected);
  });
});

describe('unsafePathReason', () => {
  it.each([
    ['src/api', undefined],
    ['.', undefined],
    ['.github/epicflow.yml', undefined],
    ['docs/.gitignore', undefined],
    ['', 'is empty'],
    ['/etc', 'is absolute'],
    ['C:/Windows', 'starts with a drive letter'],
    ['c:x', 'starts with a drive letter'],
    ['src/../secrets', 'contains a ".." segment'],
    ['..', 'contains a ".." segment'],
    ['src/*.ts', 'contains a glob character (paths are prefixes, not globs)'],
    ['src/?', 'contains a glob character (paths are prefixes, not globs)'],
    ['src/[ab]', 'contains a glob character (paths are prefixes, not globs)'],
    ['src/a\u0007b', 'contains a control character'],
    ['src/a\nb', 'contains a control character'],
    ['.git', 'is inside .git'],
    ['.git/hooks/pre-commit', 'is inside .git'],
    ['vendor/lib/.git/config', 'is inside .git'],
    ['.GIT/config', 'is inside .git'],
  ])('%j → %j', (p, reason) => {
    expect(unsafePathReason(p)).toBe(reason);
  });

  it('treats ".." inside a name as an ordinary name', () => {
    expect(unsafePathReason('docs/a..b')).toBeUndefined();
  });
});

describe('isProtectedPath', () => {
  const config = ['.github/epicflow.yml', 'epicflow.yml'];
  it.each([
    ['.github/workflows', true],
    ['.github/workflows/ci.yml', true],
    ['./.github/workflows/ci.yml', true],
    ['.github/epicflow.yml', true],
    ['epicflow.yml', true],
    // Everything under .github runs in CI with its secrets or steers it.
    ['.github/workflows-docs/x.md', true],
    ['.github/CODEOWNERS', true],
    ['.github/actions/setup/action.yml', true],
    ['.github/scripts/deploy.sh', true],
    ['.github', true],
    ['.githubx/a.yml', false],
    ['docs/.github/a.yml', false],
    ['docs/epicflow.yml', false],
    ['src', false],
  ])('%j → %j', (p, expected) => {
    expect(isProtectedPath(p, config)).toBe(expected);
  });

  it('uses the config paths it is given', () => {
    expect(isProtectedPath('ci/epicflow.yml', ['ci/epicflow.yml'])).toBe(true);
    expect(isProtectedPath('epicflow.yml', ['ci/epicflow.yml'])).toBe(false);
  });
});

describe('someOf', () => {
  it('names every path up to the limit, then how many more', () => {
    expect(someOf(['a', 'b'], 2)).toBe('a, b');
    expect(someOf(['a', 'b', 'c', 'd'], 2)).toBe('a, b and 2 more');
    expect(someOf(Array.from({ length: 25 }, (_, i) => `f${i}`))).toMatch(
      /^f0, .*, f19 and 5 more$/,
    );
  });
});

describe('foldFolders', () => {
  it('names a top-level folder with more than three paths once, with their count; the rest one by one', () => {
    const venv = Array.from({ length: 1489 }, (_, i) => `.venv/lib/f${i}.py`);
    expect(foldFolders(['package-lock.json', ...venv, 'src/a.ts', 'src/b.ts'])).toEqual([
      'package-lock.json',
      '.venv/ (1,489 files)',
      'src/a.ts',
      'src/b.ts',
    ]);
    expect(foldFolders(['a/1', 'a/2', 'a/3', 'a/4'], 4)).toEqual(['a/1', 'a/2', 'a/3', 'a/4']);
  });
});

describe('excludePattern', () => {
  it('names one path from the top, its glob characters and trailing spaces escaped', () => {
    expect(excludePattern('.venv/bin/python')).toBe('/.venv/bin/python');
    expect(excludePattern('a*b?[c]\\d')).toBe('/a\\*b\\?\\[c]\\\\d');
    // A leading `!` or `#` is not first behind the slash.
    expect(excludePattern('!important')).toBe('/!important');
    expect(excludePattern('two  ')).toBe('/two\\ \\ ');
    expect(excludePattern('a\nb')).toBeNull();
    expect(excludePattern('')).toBeNull();
  });
});
