import { describe, expect, it } from '@jest/globals';
import { landPerimeter, pathsNamedIn } from '../../../src/core/perimeter/land.js';

const files = new Set(['src/a.ts', 'src/b.ts', 'test/a.test.js', 'README.md', 'lib/x.py']);
const root = '/home/runner/checkout/_land';

describe('pathsNamedIn', () => {
  it.each([
    ['a plain path', 'FAIL test/a.test.js', ['test/a.test.js']],
    ['a line and column', 'src/a.ts:12:5 - error TS2322', ['src/a.ts']],
    ["tsc's parenthesised position", 'src/b.ts(3,1): error TS1005', ['src/b.ts']],
    [
      'a quoted absolute path in the tree',
      `location: '${root}/test/a.test.js:4:1'`,
      ['test/a.test.js'],
    ],
    ['a file:// URL', `at file://${root}/src/a.ts:1:1`, ['src/a.ts']],
    ['a leading ./', 'see ./README.md.', ['README.md']],
    ['Windows separators', 'lib\\x.py:3', ['lib/x.py']],
    [
      'each path once, in order of mention',
      'src/b.ts src/a.ts src/b.ts:2',
      ['src/b.ts', 'src/a.ts'],
    ],
    ['a path not in the tree', 'src/missing.ts:1 error', []],
    ['a folder, not a file', 'error in src/', []],
    ['an absolute path outside the tree', '/etc/passwd src', []],
    ['a prefix of a file only', 'src/a error', []],
  ])('%s', (_name, text, expected) => {
    expect(pathsNamedIn(text, files, [root])).toEqual(expected);
  });
});

describe('landPerimeter', () => {
  it.each([
    [
      'the conflicting paths alone',
      { conflicts: ['src/b.ts', 'src/a.ts'], gateOutputs: [] },
      ['src/a.ts', 'src/b.ts'],
    ],
    [
      'plus the files the failing gates name',
      { conflicts: ['src/a.ts'], gateOutputs: ['FAIL test/a.test.js', 'README.md:1 bad'] },
      ['README.md', 'src/a.ts', 'test/a.test.js'],
    ],
    [
      'gate mentions only within what the branches changed, when given',
      {
        conflicts: ['src/a.ts'],
        gateOutputs: ['error: README.md is wrong; FAIL test/a.test.js'],
        within: new Set(['test/a.test.js']),
      },
      ['src/a.ts', 'test/a.test.js'],
    ],
    [
      'conflicts stay even outside `within`',
      { conflicts: ['README.md'], gateOutputs: [], within: new Set<string>() },
      ['README.md'],
    ],
    ['nothing named: empty', { conflicts: [], gateOutputs: ['1 test failed'] }, []],
  ])('%s', (_name, input, expected) => {
    expect(landPerimeter({ files, roots: [root], ...input })).toEqual(expected);
  });
});
