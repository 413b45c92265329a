/**
 * The project's knip configuration (`npm run lint:knip`) refuses an export nothing
 * imports: a probe tree under a temp folder, checked with the repository's own
 * knip.json, fails on a function and a type exported but unused, and passes once they
 * are not exported. An export only a test imports is a use.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const KNIP = join(root, 'node_modules', 'knip', 'bin', 'knip.js');

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A probe project: the repository's knip.json and these files. */
async function probe(files: Readonly<Record<string, string>>): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-knip-'));
  await copyFile(join(root, 'knip.json'), join(dir, 'knip.json'));
  const all: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'probe', private: true, type: 'module' }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

/** Runs knip as `lint:knip` does; its exit code and output. */
function knip(cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [KNIP, '--no-progress'], { cwd }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

const ENTRY = "import { used } from './core/parts.js';\nconsole.log(used());\n";
const TEST = "import { forTests } from '../src/core/parts.js';\nforTests();\n";

describe('knip (lint:knip)', () => {
  it('fails on an exported function and type nothing imports, naming them and the file', async () => {
    const cwd = await probe({
      'src/index.ts': ENTRY,
      'test/parts.test.ts': TEST,
      'src/core/parts.ts': [
        'export function used(): number { return helper() + 1; }',
        'export function helper(): number { return 1; }',
        'export function forTests(): number { return 2; }',
        'export interface Unused { readonly a: number }',
        '',
      ].join('\n'),
    });
    const { code, output } = await knip(cwd);
    expect(code).not.toBe(0);
    expect(output).toMatch(/Unused exports[\s\S]*helper\s+function\s+src\/core\/parts\.ts/);
    expect(output).toMatch(/Unused exported types[\s\S]*Unused\s+interface\s+src\/core\/parts\.ts/);
    expect(output).not.toContain('forTests');
    expect(output).not.toMatch(/^used\b/m);
  }, 90_000);

  it('passes once only what is imported is exported', async () => {
    const cwd = await probe({
      'src/index.ts': ENTRY,
      'test/parts.test.ts': TEST,
      'src/core/parts.ts': [
        'export function used(): number { return helper() + 1; }',
        'function helper(): number { return 1; }',
        'export function forTests(): number { return 2; }',
        '',
      ].join('\n'),
    });
    const { code, output } = await knip(cwd);
    expect(output).not.toMatch(/Unused/);
    expect(code).toBe(0);
  }, 90_000);
});
