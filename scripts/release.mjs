#!/usr/bin/env node
// Releases the version in package.json: `npm run release` (the release workflow runs it
// once the release pull request is merged; see docs/releasing.md).
//
//   1. Nothing to do when the tag v<version> is on origin already (every push to main runs it).
//   2. Builds and verifies the release layout (scripts/release-verify.mjs: dist/ + action.yml).
//   3. Runs the Action tests against that very dist/ (EPICFLOW_ACTION_BUNDLE).
//   4. Builds lib/ and packs the npm package (epicflow-<version>.tgz, attached to the release).
//   5. Commits dist/ on top of the current commit, outside any branch (main never carries
//      dist/), tags it v<version> and moves v<major> to it (not for a prerelease).
//   6. Pushes both tags (v<major> with force: it moves), and prints "New tag: v<version>",
//      from which changesets/action creates the GitHub release with the CHANGELOG entry.
//
// Options: --dry-run (tag locally, push nothing), --test-command CMD (instead of step 3's),
// --lib-command CMD (instead of step 4's compile of lib/; npm pack still packs what is there).
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    'dry-run': { type: 'boolean', default: false },
    'test-command': { type: 'string' },
    'lib-command': { type: 'string' },
  },
});
const ACTION_TESTS =
  'node --experimental-vm-modules node_modules/jest/bin/jest.js --maxWorkers=2 test/action';
const BUILD_LIB = 'npx tsc -p tsconfig.build.json';
const BOT = {
  name: 'github-actions[bot]',
  email: '41898282+github-actions[bot]@users.noreply.github.com',
};

async function git(...args) {
  const { stdout } = await promisify(execFile)('git', args, { cwd: root });
  return stdout.trim();
}

/** Runs a command with its output shown; fails the release when it fails. */
function step(title, command, env = {}) {
  console.log(`\n== ${title}: ${command}`);
  return new Promise((done, fail) => {
    const child = spawn(command, {
      cwd: root,
      shell: true,
      stdio: 'inherit',
      env: { ...process.env, ...env },
    });
    child.on('exit', (code) =>
      code === 0 ? done() : fail(new Error(`${title} failed (exit ${code})`)),
    );
  });
}

async function hasTag(tag) {
  if (flags['dry-run']) return (await git('tag', '--list', tag)) === tag;
  return (await git('ls-remote', '--tags', 'origin', `refs/tags/${tag}`)) !== '';
}

async function main() {
  const { name, version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  const semver = /^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/.exec(version ?? '');
  if (!semver)
    throw new Error(`package.json version ${JSON.stringify(version)} is not a semantic version`);
  const tag = `v${version}`;
  const major = `v${semver[1]}`;
  const prerelease = semver[4] !== undefined;
  if (await hasTag(tag)) {
    console.log(`${name} ${tag} is released already: nothing to do`);
    return;
  }
  if ((await git('status', '--porcelain')) !== '') {
    throw new Error('the checkout has uncommitted changes: release from a clean commit');
  }
  const head = await git('rev-parse', 'HEAD');
  const branch = await git('rev-parse', '--abbrev-ref', 'HEAD');

  await step('build and verify the release layout', 'node scripts/release-verify.mjs');
  await step('the Action tests against dist/', flags['test-command'] ?? ACTION_TESTS, {
    EPICFLOW_ACTION_BUNDLE: join(root, 'dist'),
  });
  await step(
    'the npm package',
    `${flags['lib-command'] ?? BUILD_LIB} && npm pack --ignore-scripts`,
  );

  const identity =
    (await git('config', '--get', 'user.email').catch(() => '')) === ''
      ? ['-c', `user.name=${BOT.name}`, '-c', `user.email=${BOT.email}`]
      : [];
  await git('checkout', '--quiet', '--detach');
  try {
    await git('add', '--force', 'dist');
    await git(
      ...identity,
      'commit',
      '--quiet',
      '--no-verify',
      '-m',
      `Release ${tag}\n\nThe built Action (dist/) on top of ${head}; branches never carry dist/.`,
    );
    await git(...identity, 'tag', '--annotate', tag, '-m', `${name} ${tag}`);
    if (!prerelease)
      await git(
        ...identity,
        'tag',
        '--force',
        '--annotate',
        major,
        '-m',
        `${name} ${major}: ${tag}`,
      );
  } finally {
    await git('checkout', '--quiet', branch === 'HEAD' ? head : branch);
  }
  if (flags['dry-run']) {
    console.log(
      `\ndry run: tagged ${tag}${prerelease ? '' : ` and ${major}`} locally, pushed nothing`,
    );
  } else {
    await git('push', 'origin', `refs/tags/${tag}`);
    if (!prerelease) await git('push', '--force', 'origin', `refs/tags/${major}`);
  }
  // changesets/action reads this line to create the GitHub release.
  console.log(`New tag: ${tag}`);
}

try {
  await main();
} catch (e) {
  console.error(`release failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
