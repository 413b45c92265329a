/**
 * The jobs stay small enough to read: no file under src/jobs over 500 lines, and no
 * function there over 120 lines (a function, method, arrow or function expression, from
 * its first line to its last, measured with the TypeScript compiler's own parse). What
 * outgrows it splits along a real seam, as the job shell took what every kind did alike.
 */
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');
const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 120;

/** The number of lines of a text, a last line without a newline counted. */
function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** Every function of `text` longer than `max` lines, as `name (n lines, from line l)`. */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) {
        const named = (node as ts.FunctionLikeDeclaration).name?.getText(source) ?? 'a function';
        found.push(`${named} (${lines} lines, from line ${first + 1})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The TypeScript files under `dir`, as paths from the repository's root. */
async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

describe('the measure', () => {
  it('finds a function over the limit, whatever its form, and passes one at it', () => {
    const body = (n: number): string =>
      Array.from({ length: n }, (_, i) => `  f(${i});`).join('\n');
    const text = [
      `export function long(): void {\n${body(4)}\n}`,
      `export const arrow = (): void => {\n${body(5)}\n};`,
      `export class C {\n  method(): void {\n${body(4)}\n  }\n}`,
      `export function atLimit(): void {\n${body(3)}\n}`,
    ].join('\n');
    expect(longFunctions('probe.ts', text, 5)).toEqual([
      'long (6 lines, from line 1)',
      'a function (7 lines, from line 7)',
      'method (6 lines, from line 15)',
    ]);
  });
});

describe('src/jobs sizes', () => {
  it(`keeps every file at ${MAX_FILE_LINES} lines and every function at ${MAX_FUNCTION_LINES} or fewer`, async () => {
    const files = await sources('src/jobs');
    expect(files.length).toBeGreaterThan(0);
    const tooLong: string[] = [];
    for (const file of files) {
      const text = await readFile(join(root, file), 'utf8');
      const lines = lineCount(text);
      if (lines > MAX_FILE_LINES) tooLong.push(`${file} has ${lines} lines`);
      for (const f of longFunctions(file, text, MAX_FUNCTION_LINES)) tooLong.push(`${file}: ${f}`);
    }
    expect(tooLong).toEqual([]);
  });
});
