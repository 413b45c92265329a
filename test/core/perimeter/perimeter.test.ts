import { describe, expect, it } from '@jest/globals';
import {
  classifyChanges,
  describeStrays,
  isClean,
  strayPaths,
  followLink,
} from '../../../src/core/perimeter/index.js';
import type { PerimeterChange } from '../../../src/core/perimeter/index.js';

const file = (path: string, extra: Partial<PerimeterChange> = {}): PerimeterChange => ({
  path,
  status: 'modified',
  mode: 'file',
  ...extra,
});

const base = {
  owns: ['src/health', 'test/health.test.js'],
  reads: ['src/server.js'],
  configPaths: ['.github/epicflow.yml', 'epicflow.yml'],
  allowWorkflowChanges: false,
};

describe('classifyChanges', () => {
  it('sorts changes into owned, read-only and outside', () => {
    const r = classifyChanges({
      ...base,
      changes: [
        file('src/health/index.js'),
        file('src/server.js'),
        file('README.md'),
        file('test/health.test.js'),
      ],
    });
    expect(r.owned).toEqual(['src/health/index.js', 'test/health.test.js']);
    expect(r.readOnly).toEqual(['src/server.js']);
    expect(r.outside).toEqual(['README.md']);
    expect(r.forbidden).toEqual([]);
    expect(isClean(r)).toBe(false);
    expect(strayPaths(r)).toEqual(['src/server.js', 'README.md']);
    expect(describeStrays(r)).toEqual([
      'src/server.js: read-only for this story (context, never change)',
      "README.md: not in this story's owned paths",
    ]);
  });

  it('judges each path as git names it: one that only looks like an owned path is outside', () => {
    const lookalikes = [
      ' src/health/x.js',
      'src/health /x.js',
      'src/health\\x.js',
      'src\\health\\x.js',
      'src/health\n/x.js',
      '-src/health/x.js',
      './src/health/x.js',
    ];
    const unreadable = 'src/health\uFFFD/x.js';
    const r = classifyChanges({
      ...base,
      changes: [
        ...lookalikes.map((p) => file(p)),
        file(unreadable),
        file('src/health/-x .js'),
        file('src/health/ok.js'),
      ],
    });
    expect(r.owned).toEqual(['src/health/-x .js', 'src/health/ok.js']);
    expect(r.outside).toEqual(lookalikes);
    expect(r.forbidden).toEqual([{ path: unreadable, reason: 'path that is not UTF-8' }]);
    // What is put back is the very path git named.
    expect(strayPaths(r)).toEqual([...lookalikes, unreadable]);
  });

  it('forbids workflow files, the config file, submodules and escaping symlinks even when owned', () => {
    const r = classifyChanges({
      ...base,
      owns: ['.'],
      reads: [],
      changes: [
        file('.github/workflows/ci.yml'),
        file('.github/actions/setup/action.yml'),
        file('.github/scripts/release.sh'),
        file('.github/epicflow.yml'),
        file('epicflow.yml'),
        file('vendor/lib', { mode: 'submodule' }),
        file('src/link', { status: 'added', mode: 'symlink', symlinkTarget: '../../etc/passwd' }),
        file('src/ok-link', { status: 'added', mode: 'symlink', symlinkTarget: '../README.md' }),
        file('src/gone', { status: 'deleted', mode: 'symlink', symlinkTarget: '/etc' }),
      ],
    });
    expect(r.forbidden).toEqual([
      { path: '.github/workflows/ci.yml', reason: 'workflow file' },
      { path: '.github/actions/setup/action.yml', reason: 'file under .github' },
      { path: '.github/scripts/release.sh', reason: 'file under .github' },
      { path: '.github/epicflow.yml', reason: 'epicflow config file' },
      { path: 'epicflow.yml', reason: 'epicflow config file' },
      { path: 'vendor/lib', reason: 'submodule change' },
      { path: 'src/link', reason: 'symlink pointing outside the repository' },
    ]);
    expect(r.owned).toEqual(['src/ok-link', 'src/gone']);
  });

  it('forbids a path git could not name in UTF-8 (it reads as U+FFFD), even when owned', () => {
    const r = classifyChanges({
      ...base,
      owns: ['.'],
      reads: [],
      changes: [file('src/health/\uFFFD.js', { status: 'added' }), file('src/health/ok.js')],
    });
    expect(r.forbidden).toEqual([
      { path: 'src/health/\uFFFD.js', reason: 'path that is not UTF-8' },
    ]);
    expect(r.owned).toEqual(['src/health/ok.js']);
  });

  it('lets files under .github through when the config allows them', () => {
    const r = classifyChanges({
      ...base,
      owns: ['.github'],
      allowWorkflowChanges: true,
      changes: [file('.github/workflows/ci.yml'), file('.github/actions/setup/action.yml')],
    });
    expect(r.owned).toEqual(['.github/workflows/ci.yml', '.github/actions/setup/action.yml']);
    expect(isClean(r)).toBe(true);
  });
});

describe('followLink', () => {
  it.each([
    ['a/link', '/etc/passwd', true],
    ['a/link', '../../x', true],
    ['a/link', '../x', false],
    ['link', '.', false],
    ['a/link', '../.git/config', true],
    ['a/link', 'C:\\Windows', true],
  ])('%s -> %s escapes: %s', (link, target, escapes) => {
    expect(followLink(link, new Map([[link, target]])).escapes).toBe(escapes);
  });

  it('climbs from where a link leads, not from where it stands', () => {
    // x/up -> .. is the top; top/.. is outside, though `x/up/..` reads as `x`.
    const links = new Map([
      ['x/up', '..'],
      ['chain', 'x/up/..'],
    ]);
    expect(followLink('x/up', links).escapes).toBe(false);
    expect(followLink('chain', links)).toEqual({ escapes: true, through: ['chain', 'x/up'] });
  });

  it('follows a chain that stays inside to its end, and refuses a loop', () => {
    const inside = new Map([
      ['a', 'b/file'],
      ['b', 'deep/er'],
    ]);
    expect(followLink('a', inside)).toEqual({ escapes: false, through: ['a', 'b'] });
    const loop = new Map([
      ['p', 'q'],
      ['q', 'p'],
    ]);
    expect(followLink('p', loop).escapes).toBe(true);
  });
});

describe('symbolic links in classifyChanges', () => {
  const link = (path: string, target: string): PerimeterChange => ({
    path,
    status: 'added',
    mode: 'symlink',
    symlinkTarget: target,
  });

  it('refuses a changed link whose chain leaves, through links of the commit it did not change', () => {
    const r = classifyChanges({
      ...base,
      owns: ['src'],
      changes: [link('src/leak', 'hop/..')],
      links: new Map([
        ['src/hop', '..'],
        ['src/leak', 'hop/..'],
      ]),
    });
    expect(r.forbidden).toEqual([
      { path: 'src/leak', reason: 'symlink pointing outside the repository' },
    ]);
  });

  it('refuses the changed link an unchanged one now leaves through', () => {
    // The old link `src/old -> b/..` was inside while `src/b` was a folder.
    const r = classifyChanges({
      ...base,
      owns: ['src'],
      changes: [link('src/b', '..')],
      links: new Map([['src/old', 'b/..']]),
    });
    expect(r.forbidden).toEqual([
      { path: 'src/b', reason: 'symlink pointing outside the repository' },
    ]);
  });

  it('merges a chain of links that ends inside', () => {
    const r = classifyChanges({
      ...base,
      owns: ['src'],
      changes: [link('src/a', 'b/x'), link('src/b', '../src')],
    });
    expect(r.owned).toEqual(['src/a', 'src/b']);
    expect(isClean(r)).toBe(true);
  });
});

describe('describeStrays', () => {
  it('names each forbidden path by its path, with why it is never merged', () => {
    const lines = describeStrays({
      owned: [],
      readOnly: ['src/api.ts'],
      outside: ['README.md'],
      forbidden: [{ path: '.github/workflows/ci.yml', reason: 'workflow file' }],
    });
    expect(lines).toEqual([
      'src/api.ts: read-only for this story (context, never change)',
      "README.md: not in this story's owned paths",
      '.github/workflows/ci.yml: never merged (workflow file)',
    ]);
  });
});
