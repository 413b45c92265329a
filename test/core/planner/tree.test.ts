import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { trimTree } from '../../../src/core/planner/index.js';

const many = (dir: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${dir}/f${String(i).padStart(3, '0')}.json`);

describe('trimTree', () => {
  it.each<[string, string[], number, string]>([
    ['an empty repository', [], 100, '(no files)'],
    [
      'everything, in path order, when it fits',
      ['src/b.ts', 'README.md', 'src/a.ts'],
      100,
      'README.md\nsrc/a.ts\nsrc/b.ts',
    ],
    [
      'a file before a folder of the same name prefix',
      ['src/core/x.ts', 'src/core.ts'],
      100,
      'src/core.ts\nsrc/core/x.ts',
    ],
    [
      'a large folder closed into one line, the rest open',
      ['README.md', 'src/a.ts', 'src/b.ts', ...many('fixtures', 50)],
      60,
      'README.md\nfixtures/ (50 files)\nsrc/a.ts\nsrc/b.ts',
    ],
    [
      'the top level kept, folders closed, when little fits',
      ['README.md', 'src/a.ts', 'src/b.ts', 'src/c/d.ts', ...many('fixtures', 50)],
      50,
      'README.md\nfixtures/ (50 files)\nsrc/ (3 files)',
    ],
    [
      'smaller folders opened before larger ones at the same depth',
      [
        'a/aaaaaaa1',
        'a/aaaaaaa2',
        'a/aaaaaaa3',
        'a/aaaaaaa4',
        'b/bbbbbbb1',
        'b/bbbbbbb2',
        'b/bbbbbbb3',
      ],
      60,
      'a/ (4 files)\nb/bbbbbbb1\nb/bbbbbbb2\nb/bbbbbbb3',
    ],
    [
      'a large folder below stays closed while smaller ones open',
      [
        'src/a/1.ts',
        'src/a/2.ts',
        'src/a/3.ts',
        'src/a/4.ts',
        'src/a/5.ts',
        'src/b/3.ts',
        'lib/x.ts',
      ],
      50,
      'lib/x.ts\nsrc/a/ (5 files)\nsrc/b/3.ts',
    ],
    [
      'folders opened to the last level when it fits',
      ['x/y/z/1', 'x/y/z/2', 'w/1', 'w/2'],
      30,
      'w/1\nw/2\nx/y/z/1\nx/y/z/2',
    ],
    [
      'the first top-level entries, then how many more, when even the top level does not fit',
      ['a.md', 'b.md', 'c.md', 'd.md', 'e.md', 'f.md', 'g.md', 'h.md'],
      35,
      'a.md\n… 7 more entries (7 files)',
    ],
    [
      'only the count of what is left when one entry does not fit',
      ['a.md', 'b.md', 'c.md', 'd/1', 'd/2', 'e.md'],
      30,
      '… 5 more entries (6 files)',
    ],
    ['nothing when not even the count fits', ['a.md', 'b.md'], 3, ''],
    ['one file', ['x/y.ts'], 100, 'x/y.ts'],
  ])('%s', (_name, paths, budget, expected) => {
    const out = trimTree(paths, budget);
    expect(out).toBe(expected);
    expect(out.length).toBeLessThanOrEqual(budget);
  });

  it('lists 20,000 files within its budget, keeping every top-level folder', () => {
    const files = [
      'package.json',
      ...many('vendor/big', 900).flatMap((f) => [f, f.replace('big', 'big2')]),
      ...Array.from({ length: 18_000 }, (_, i) => `src/m${i % 40}/file${i}.ts`),
      'docs/index.md',
    ];
    const out = trimTree(files, 4000);
    expect(out.length).toBeLessThanOrEqual(4000);
    expect(out).toContain('package.json');
    expect(out).toContain('docs/index.md');
    expect(out).toMatch(/^vendor\/big\/ \(900 files\)$/m);
    expect(out).toMatch(/^src\/m0\/ \(450 files\)$/m);
  });

  const path = fc
    .array(fc.constantFrom('a', 'b', 'src', 'x.ts', 'lib', 'README.md', 'é'), {
      minLength: 1,
      maxLength: 4,
    })
    .map((parts) => parts.join('/'));

  it('never exceeds its budget, and every line names real files', () => {
    fc.assert(
      fc.property(
        fc.array(path, { maxLength: 60 }),
        fc.integer({ min: 0, max: 400 }),
        (raw, budget) => {
          // A path that is also a folder of another path is not a real repository.
          const files = raw.filter((p) => !raw.some((q) => q.startsWith(`${p}/`)));
          const out = trimTree(files, budget);
          expect(out.length).toBeLessThanOrEqual(budget);
          for (const line of out.split('\n')) {
            const folder = /^(.*)\/ \((\d+) files?\)$/.exec(line);
            if (folder !== null) {
              const inside = new Set(files.filter((f) => f.startsWith(`${folder[1]}/`)));
              expect(inside.size).toBe(Number(folder[2]));
            } else if (!line.startsWith('… ') && line !== '(no files)' && line !== '') {
              expect(files).toContain(line);
            }
          }
        },
      ),
    );
  });

  it('lists every file once (directly or in a folder line) when the top level fits', () => {
    fc.assert(
      fc.property(
        fc.array(path, { maxLength: 60 }),
        fc.integer({ min: 200, max: 2000 }),
        (raw, budget) => {
          const files = [...new Set(raw.filter((p) => !raw.some((q) => q.startsWith(`${p}/`))))];
          const out = trimTree(files, budget);
          if (out.includes('more entr')) return;
          let covered = 0;
          for (const line of out.split('\n')) {
            const folder = /^(.*)\/ \((\d+) files?\)$/.exec(line);
            covered += folder === null ? (files.length === 0 ? 0 : 1) : Number(folder[2]);
          }
          expect(covered).toBe(files.length);
        },
      ),
    );
  });
});
