import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error -- a JavaScript module of the test configuration, without types
import { prebundled } from './prebundled.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Bundles = (root: string, packages?: readonly string[]) => Promise<Record<string, string>>;
const bundles = prebundled as Bundles;

describe('dependencies as one module each (jest resolves them to their bundles)', () => {
  it('bundles a package into one file that exports what the package exports and works as it does', async () => {
    const map = await bundles(ROOT, ['yaml']);
    expect(Object.keys(map)).toEqual(['yaml']);
    const file = map['yaml'] ?? '';
    expect(file).toMatch(/node_modules\/\.cache\/epicflow-prebundled\/[0-9a-f]{16}\/yaml\.mjs$/);
    const bundled = (await import(file)) as Record<string, unknown>;
    // What Node itself imports (under jest, \`yaml\` is the bundle).
    const installed = JSON.parse(
      execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "console.log(JSON.stringify(Object.keys(await import('yaml'))))",
        ],
        { cwd: ROOT, encoding: 'utf8' },
      ),
    ) as string[];
    expect(Object.keys(bundled).sort()).toEqual(installed.sort());
    const { parse } = bundled as { parse: (text: string) => unknown };
    expect(parse('a: [1, two]')).toEqual({ a: [1, 'two'] });
    // Made once: asked again, the same file.
    expect(await bundles(ROOT, ['yaml'])).toEqual(map);
  });

  it('is what jest gives a test importing the package by name: one module, not two', async () => {
    const map = JSON.parse(process.env['EPICFLOW_TEST_PREBUNDLED_MAP'] ?? '{}') as Record<
      string,
      string
    >;
    expect(Object.keys(map).sort()).toEqual(
      ['bottleneck', 'commander', 'graphql', 'probot', 'yaml', 'zod'].sort(),
    );
    const byName = (await import('zod')) as { z: unknown };
    const byFile = (await import(map['zod'] ?? '')) as { z: unknown };
    expect(byName.z).toBe(byFile.z);
  });

  it('leaves out a package installed twice (a dependency would get the other copy)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'epicflow-prebundled-'));
    dirs.push(root);
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    writeFileSync(join(root, 'package.json'), '{"name":"x","type":"module"}');
    writeFileSync(
      join(root, 'package-lock.json'),
      JSON.stringify({
        packages: {
          'node_modules/yaml': { version: '2.9.1' },
          'node_modules/other/node_modules/yaml': { version: '1.10.2' },
          'node_modules/commander': { version: '14.0.3' },
        },
      }),
    );
    expect(Object.keys(await bundles(root, ['yaml', 'commander']))).toEqual(['commander']);
  });
});
