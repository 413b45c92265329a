/**
 * No source file grows past 500 lines: a file that big holds more than one idea, and
 * its parts go into modules of their own along a real seam.
 */
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const MAX_LINES = 500;

/** The number of lines of a text, a last line without a newline counted. */
function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

describe('source file sizes', () => {
  it(`keeps every file under src/ at ${MAX_LINES} lines or fewer`, async () => {
    const entries = await readdir(join(root, 'src'), { withFileTypes: true, recursive: true });
    const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    expect(files.length).toBeGreaterThan(0);
    const tooLong: string[] = [];
    for (const file of files) {
      const lines = lineCount(await readFile(file, 'utf8'));
      if (lines > MAX_LINES) tooLong.push(`${relative(root, file)} has ${lines} lines`);
    }
    expect(tooLong.sort()).toEqual([]);
  });
});
