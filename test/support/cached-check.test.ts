/**
 * `scripts/cached-check.mjs`: a check's cache, written in one clone, is used by another clone
 * of the same project at another path, and never hides a change.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error a plain script of the project, without types
import { relocate } from '../../scripts/cached-check.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('relocate', () => {
  it('moves the paths under one folder to another, as JSON writes them, and nothing else', () => {
    const text = JSON.stringify(['/w/a/src/x.ts', '/w/a/src', '/w/ab/src/y.ts', 'say /w/a/ here']);
    expect(JSON.parse(relocate(text, '/w/a', '/v/b'))).toEqual([
      '/v/b/src/x.ts',
      '/v/b/src',
      '/w/ab/src/y.ts',
      'say /w/a/ here',
    ]);
    const odd = JSON.stringify({ p: 'C:\\w "q"/f.ts' });
    expect(JSON.parse(relocate(odd, 'C:\\w "q"', '/v'))).toEqual({ p: '/v/f.ts' });
  });
});

describe('ESLint through cached-check, in two clones', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'epicflow-cached-check-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A small project at `path` whose ESLint is the repository's own. */
  function clone(path: string): void {
    mkdirSync(join(path, 'scripts'), { recursive: true });
    mkdirSync(join(path, 'node_modules/.bin'), { recursive: true });
    cpSync(join(ROOT, 'scripts/cached-check.mjs'), join(path, 'scripts/cached-check.mjs'));
    symlinkSync(join(ROOT, 'node_modules/.bin/eslint'), join(path, 'node_modules/.bin/eslint'));
    writeFileSync(join(path, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(
      join(path, 'eslint.config.js'),
      "export default [{ files: ['**/*.js'], rules: { 'no-unused-vars': 'error' } }];\n",
    );
    writeFileSync(join(path, 'a.js'), 'export const a = 1;\n');
    writeFileSync(join(path, 'b.js'), 'export const b = 2;\n');
  }

  function check(path: string) {
    const r = spawnSync(process.execPath, [join(path, 'scripts/cached-check.mjs'), 'eslint'], {
      cwd: path,
      encoding: 'utf8',
      // ESLint says which files it skipped for its cache.
      env: { ...process.env, EPICFLOW_TEST_CACHE: join(dir, 'cache'), DEBUG: 'eslint:*' },
    });
    const skipped = [...r.stderr.matchAll(/Skipping file since it hasn't changed: (\S+)/g)].map(
      (m) => m[1],
    );
    return { code: r.status, stdout: r.stdout, skipped };
  }

  it('the second clone lints only what changed, and a new error fails it', () => {
    const first = join(dir, 'first');
    const second = join(dir, 'second-clone');
    clone(first);
    const cold = check(first);
    expect(cold).toMatchObject({ code: 0, skipped: [] });

    clone(second);
    writeFileSync(join(second, 'b.js'), 'const unused = 2;\nexport const b = 2;\n');
    const warm = check(second);
    expect(warm.skipped).toContain(join(second, 'a.js'));
    expect(warm.skipped).not.toContain(join(second, 'b.js'));
    expect(warm.code).toBe(1);
    expect(warm.stdout).toContain(join(second, 'b.js'));
    expect(warm.stdout).toContain("'unused' is assigned a value but never used");

    // The failure is kept with the file: the same clone fails again without linting it.
    const again = check(second);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("'unused' is assigned a value but never used");
    const kept = JSON.parse(readFileSync(join(dir, 'cache/checks/eslint.json'), 'utf8'));
    expect(kept.root).toBe(second);
  });
});

describe('Prettier through prettier-check, in two clones', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'epicflow-prettier-check-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A small git project at `path` whose Prettier is the repository's own. */
  function clone(path: string): void {
    mkdirSync(join(path, 'scripts'), { recursive: true });
    mkdirSync(join(path, 'node_modules'), { recursive: true });
    for (const script of ['cached-check.mjs', 'prettier-check.mjs']) {
      cpSync(join(ROOT, 'scripts', script), join(path, 'scripts', script));
    }
    symlinkSync(join(ROOT, 'node_modules/prettier'), join(path, 'node_modules/prettier'));
    writeFileSync(join(path, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(path, '.gitignore'), 'node_modules\n');
    writeFileSync(join(path, '.prettierignore'), 'ignored.js\nscripts\npackage.json\n');
    writeFileSync(join(path, '.prettierrc.json'), '{ "singleQuote": true }\n');
    writeFileSync(join(path, 'a.js'), "export const a = 'a';\n");
    writeFileSync(join(path, 'b.js'), 'export const b = 2;\n');
    writeFileSync(join(path, 'ignored.js'), 'export   const   c=3\n');
    writeFileSync(join(path, 'notes.txt'), 'no parser   for this\n');
    spawnSync('git', ['init', '-q', path]);
  }

  function check(path: string) {
    const r = spawnSync(process.execPath, [join(path, 'scripts/prettier-check.mjs')], {
      cwd: path,
      encoding: 'utf8',
      env: { ...process.env, EPICFLOW_TEST_CACHE: join(dir, 'cache') },
    });
    return { code: r.status, out: r.stdout + r.stderr };
  }

  it('the second clone formats only what changed, and never passes a change', () => {
    const first = join(dir, 'first');
    const second = join(dir, 'second-clone');
    clone(first);
    expect(check(first)).toEqual({
      code: 0,
      out: expect.stringContaining('(3 files, 0 of them as a passing run left them)'),
    });

    clone(second);
    writeFileSync(join(second, 'b.js'), 'export   const b=2\n');
    const warm = check(second);
    expect(warm.code).toBe(1);
    expect(warm.out).toContain('[warn] b.js\n');
    expect(warm.out).not.toContain('a.js');
    expect(warm.out).toContain('Checked 3 files, 2 of them as a passing run left them.');

    // The same content under other options is formatted again: a.js fails with double quotes.
    writeFileSync(join(second, 'b.js'), 'export const b = 2;\n');
    writeFileSync(join(second, '.prettierrc.json'), '{ "singleQuote": false }\n');
    const otherOptions = check(second);
    expect(otherOptions.code).toBe(1);
    expect(otherOptions.out).toContain('[warn] a.js\n');
    expect(otherOptions.out).not.toContain('[warn] b.js');
  });
});
