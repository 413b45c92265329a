/**
 * `npm run release` (scripts/release.mjs), the step the release workflow runs once the
 * release pull request is merged, in a copy of this checkout whose `origin` is a bare
 * repository: the tags it pushes, what the release commit holds, and that a second run
 * does nothing. The Action tests it runs against dist/ are replaced by a no-op here (they
 * run in their own suites), and its compile of lib/ by a copy of the lib/ the other package
 * tests share (test/support/built-package.ts: the same `tsc -p tsconfig.build.json`, which
 * `npm ci` also runs as `prepare`, here and before every real release; about 15 s of CPU
 * saved). Everything else is the real script: it builds and verifies dist/, packs the
 * package with npm from what lib/ holds then, commits, tags and pushes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shellWord } from '../../src/core/shell-word.js';
import { builtPackage } from '../support/built-package.js';
import { stageCheckout } from '../support/staged-checkout.js';

let work: string;
let checkout: string;
let origin: string;
let version: string;
/** The release's step that compiles lib/: a copy of the built one. */
let libCommand: string;

// HOME is a folder of the test's own (set in beforeAll): npm keeps its cache there, and a
// shared one (the system's temp folder) may hold another user's files.
const gitEnv: Record<string, string> = {
  PATH: process.env['PATH'] ?? '',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: gitEnv }).toString('utf8').trim();
}

function release(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        join(checkout, 'scripts/release.mjs'),
        '--test-command',
        'node -e "process.exit(0)"',
        '--lib-command',
        libCommand,
        ...args,
      ],
      { cwd: checkout, env: gitEnv, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'epicflow-release-test-'));
  gitEnv['HOME'] = join(work, 'home');
  await mkdir(gitEnv['HOME']);
  checkout = join(work, 'epicflow');
  origin = join(work, 'origin.git');
  await stageCheckout(checkout);
  libCommand = `cp -R ${shellWord(join(await builtPackage(), 'lib'))} lib`;
  version = (
    JSON.parse(await readFile(join(checkout, 'package.json'), 'utf8')) as { version: string }
  ).version;
  git(work, 'init', '--quiet', '--bare', origin);
  git(checkout, 'init', '--quiet', '-b', 'main');
  git(checkout, 'config', 'user.name', 'Maintainer');
  git(checkout, 'config', 'user.email', 'maintainer@example.com');
  git(checkout, 'add', '-A');
  git(checkout, 'commit', '--quiet', '-m', 'main');
  git(checkout, 'remote', 'add', 'origin', origin);
  git(checkout, 'push', '--quiet', 'origin', 'main');
  // An older release's major tag, which this release must move.
  const major = `v${version.split('.')[0]}`;
  git(checkout, 'tag', major);
  git(checkout, 'push', '--quiet', 'origin', major);
  git(checkout, 'tag', '-d', major);
}, 180_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('npm run release', () => {
  it('refuses a checkout with uncommitted changes, tagging nothing', async () => {
    await writeFile(join(checkout, 'README.md'), 'edited\n');
    const r = await release();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('release failed: the checkout has uncommitted changes');
    expect(git(origin, 'tag', '--list', `v${version}`)).toBe('');
    git(checkout, 'checkout', '--quiet', 'README.md');
  });

  it('tags v<version> and moves v<major> on origin to a commit holding dist/ on top of main', async () => {
    const main = git(checkout, 'rev-parse', 'HEAD');
    const r = await release();
    expect(r.stderr).not.toContain('release failed');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`New tag: v${version}`);
    const major = `v${version.split('.')[0]}`;
    const released = git(origin, 'rev-parse', `v${version}^{commit}`);
    expect(git(origin, 'rev-parse', `${major}^{commit}`)).toBe(released);
    expect(git(origin, 'rev-parse', `${released}^`)).toBe(main);
    const files = git(origin, 'ls-tree', '-r', '--name-only', released).split('\n');
    expect(files).toEqual(
      expect.arrayContaining(['action.yml', 'dist/index.js', 'dist/package.json']),
    );
    // main itself is untouched, and the checkout is back on it.
    expect(git(origin, 'rev-parse', 'main')).toBe(main);
    expect(git(origin, 'ls-tree', '-r', '--name-only', 'main')).not.toContain('dist/index.js');
    expect(git(checkout, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    // The package npm packed from the checkout: lib/ as its build step left it, no sources.
    const packed = execFileSync('tar', ['-tzf', join(checkout, `epicflow-${version}.tgz`)])
      .toString('utf8')
      .split('\n');
    expect(packed).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/lib/cli/main.js',
        'package/action.yml',
      ]),
    );
    expect(packed.filter((f) => f.startsWith('package/src/'))).toEqual([]);
  }, 360_000);

  it('does nothing once the version is released (every push to main runs it)', async () => {
    const r = await release();
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout).toBe(`epicflow v${version} is released already: nothing to do\n`);
  });
});
