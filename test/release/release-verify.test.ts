/**
 * `scripts/release-verify.mjs`, the release workflow's build-and-verify step: it builds
 * the layout `uses: owner/epicflow@v1` needs and proves it runs alone. Here it builds
 * into a temporary folder; then broken layouts show that its check can fail, naming why.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/release-verify.mjs');

function verify(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

const scratch: string[] = [];
async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'epicflow-rv-test-'));
  scratch.push(dir);
  return dir;
}
afterAll(async () => {
  for (const d of scratch) await rm(d, { recursive: true, force: true });
});

let built: string | undefined;
/** The layout the script built (once per file). */
async function goodLayout(): Promise<string> {
  if (built !== undefined) return built;
  const dir = await folder();
  const r = await verify(dir);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  built = dir;
  return dir;
}

/** A copy of the good layout, changed by `change`. */
async function broken(change: (dir: string) => Promise<void>): Promise<string> {
  const dir = await folder();
  await cp(await goodLayout(), dir, { recursive: true });
  await change(dir);
  return dir;
}

describe('release-verify builds the release layout', () => {
  it('action.yml and the bundle runs.main names, running alone and refusing bad inputs', async () => {
    const dir = await goodLayout();
    expect(await readFile(join(dir, 'action.yml'), 'utf8')).toBe(
      await readFile(join(ROOT, 'action.yml'), 'utf8'),
    );
    expect(JSON.parse(await readFile(join(dir, 'dist/package.json'), 'utf8'))).toEqual({
      type: 'module',
    });
    // No copy of undici, which only @actions/core's OIDC request would use (build-action.mjs).
    const bundle = await readFile(join(dir, 'dist/index.js'), 'utf8');
    expect(bundle).not.toContain('node_modules/undici/');
    const again = await verify('--check', dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /^release layout ok in .+: action\.yml runs node24 dist\/index\.js \(\d+ KiB\), which runs alone and refuses bad inputs with exit 1\n$/,
    );
  });
});

describe('release-verify refuses a layout that `uses:` could not run', () => {
  it('runs.main naming a file that is not there', async () => {
    const dir = await broken((d) => rm(join(d, 'dist/index.js')));
    const r = await verify('--check', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`action.yml runs.main dist/index.js: no such file in ${dir}`);
  });

  it('a bundle that still imports a package (it is not installed on a runner)', async () => {
    const dir = await broken((d) =>
      writeFile(join(d, 'dist/index.js'), "import YAML from 'yaml';\nconsole.log(YAML);\n"),
    );
    const r = await verify('--check', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('dist/index.js with bad inputs did not log the input error');
    expect(r.stderr).toContain("Cannot find package 'yaml'");
  });

  it('a bundle that accepts bad inputs', async () => {
    const dir = await broken((d) => writeFile(join(d, 'dist/index.js'), 'process.exit(0);\n'));
    const r = await verify('--check', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('dist/index.js with bad inputs exited 0, expected 1');
  });

  it('an ESM bundle without "type": "module" beside it, and a runtime runners do not have', async () => {
    const dir = await broken(async (d) => {
      await rm(join(d, 'dist/package.json'));
      const action = await readFile(join(d, 'action.yml'), 'utf8');
      await writeFile(join(d, 'action.yml'), action.replace('using: node24', 'using: node12'));
    });
    const r = await verify('--check', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('action.yml runs.using is "node12", expected one of node20, node24');
    expect(r.stderr).toContain('dist/package.json must say "type": "module" (the bundle is ESM)');
  });

  it('a folder with no action.yml', async () => {
    const dir = await folder();
    await mkdir(join(dir, 'dist'));
    expect(await verify('--check', dir)).toMatchObject({ code: 1 });
  });
});
