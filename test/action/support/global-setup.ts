/**
 * jest globalSetup of the action project: the bundle is built once per test run,
 * the way a release builds it (`scripts/build-action.mjs`), into a temp folder
 * that `buildBundle` copies from. Both forms: `index.js` (what `runs.main`
 * starts) and `run.js` (`--module`, for @github/local-action).
 */
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export default async function globalSetup(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'epicflow-test-bundle-'));
  const build = (...args: string[]) =>
    promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build-action.mjs'), ...args], {
      cwd: ROOT,
    });
  await Promise.all([build(join(dir, 'main')), build(join(dir, 'module'), '--module')]);
  // Workers are started after this and inherit it.
  process.env['EPICFLOW_TEST_BUNDLE_DIR'] = dir;
}
