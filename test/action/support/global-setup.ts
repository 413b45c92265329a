/**
 * jest globalSetup of the action project: the bundle is built once per test run,
 * the way a release builds it (`scripts/build-action.mjs`), into a temp folder
 * that `buildBundle` copies from. Both forms: `index.js` (what `runs.main`
 * starts) and `run.js` (`--module`, for @github/local-action); and the module the jobs
 * preload to start their processes from the tests' helper (test/support/preload-starter.ts).
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BUILD, bundleEntryInto, ROOT } from '../../support/entry-bundle.js';

export default async function globalSetup(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'epicflow-test-bundle-'));
  const build = (...args: string[]) =>
    promisify(execFile)(process.execPath, [BUILD, ...args], { cwd: ROOT });
  await Promise.all([build(join(dir, 'main')), build(join(dir, 'module'), '--module')]);
  // The scripted agents, where the agent user may read them (see agents.ts).
  const agents = await mkdtemp(join(tmpdir(), 'epicflow-test-agents-'));
  await chmod(agents, 0o755);
  const here = dirname(fileURLToPath(import.meta.url));
  for (const name of (await readdir(here)).filter((n) => n.endsWith('.mjs'))) {
    await copyFile(join(here, name), join(agents, name));
    await chmod(join(agents, name), 0o644);
  }
  // What the jobs preload to start their processes from the tests' helper (world.ts), where
  // a job run as another user may read it too.
  const preload = await bundleEntryInto(agents, join(ROOT, 'test/support/preload-starter.ts'));
  for (const file of [
    preload,
    ...['process-starter-child.py', 'package.json'].map((n) => join(agents, n)),
  ]) {
    await chmod(file, 0o644);
  }
  // Workers are started after this and inherit them.
  process.env['EPICFLOW_TEST_BUNDLE_DIR'] = dir;
  process.env['EPICFLOW_TEST_AGENT_DIR'] = agents;
  process.env['EPICFLOW_TEST_JOB_PRELOAD'] = preload;
}
