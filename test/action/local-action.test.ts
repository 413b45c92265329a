/**
 * The action run by `@github/local-action` (GitHub's local runner for
 * JavaScript actions). local-action reads `action.yml` from the action folder,
 * loads a dotenv file into the environment, imports the entrypoint and calls
 * its exported `run()`.
 *
 * The BUNDLE: `scripts/build-action.mjs --module` builds `run.js`, the same
 * bundle as `dist/index.js` but exporting `run()` instead of calling it,
 * into a released-action layout (`action.yml`, `dist/`). local-action's
 * `@actions/core` stub cannot reach the copy inlined in the bundle, so the
 * bundle reads its inputs from the `INPUT_*` variables local-action loads and
 * writes the files a runner reads back (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`),
 * and a failed step makes local-action exit non-zero, as on a runner.
 *
 * The SOURCE (`src/action/run.ts`, through local-action's stubs) is the
 * developer's debugging loop; one check keeps it working.
 *
 * @needs root
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  jobResult,
  planBody,
  prepareJob,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
  type JobSpec,
} from './support/world.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LOCAL_ACTION = join(ROOT, 'node_modules/@github/local-action/bin/local-action.js');

/**
 * `local-action run <action folder> <entrypoint> <dotenv>`. It runs from the
 * repository root: it starts itself with `npm exec tsx` and finds the
 * `@actions/*` packages to stub with `npm ls`, both from the working folder.
 * Only what a shell needs is in its environment; everything the runner would
 * set comes from the dotenv file.
 */
async function localAction(
  actionDir: string,
  entrypoint: string,
  dotenv: string,
  vars: Readonly<Record<string, string>>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  await writeFile(
    dotenv,
    Object.entries(vars)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join('\n'),
  );
  return new Promise((done) => {
    execFile(
      process.execPath,
      [LOCAL_ACTION, 'run', actionDir, entrypoint, dotenv],
      {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: process.env['HOME'] ?? tmpdir(),
          NO_COLOR: '1',
        },
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** What the action printed: local-action's "Running Action" section, without its own banners and tables. */
function actionLog(stdout: string): string {
  const start = stdout.indexOf('Running Action');
  const end = stdout.indexOf('Action Outputs', start);
  expect(start).toBeGreaterThan(-1);
  return stdout.slice(start, end === -1 ? undefined : end);
}

/** The bundled action through local-action: a runner's step, seen as the runner sees it. */
async function runBundled(job: JobSpec): Promise<JobRun> {
  const prepared = await prepareJob(w, job);
  // PATH and HOME stay local-action's own (it runs npm); the rest is the runner's.
  const { PATH: _path, HOME: _home, ...vars } = prepared.env;
  const run = await localAction(actionDir, 'dist/run.js', join(scratch, `${job.name}.env`), vars);
  return jobResult(prepared, run);
}

let w: ActionWorld;
let scratch: string;
/** A released action's layout: `action.yml` at the top, the bundle in `dist/`. */
let actionDir: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'epicflow-local-action-'));
  actionDir = join(scratch, 'action');
  await mkdir(actionDir);
  await copyFile(join(ROOT, 'action.yml'), join(actionDir, 'action.yml'));
  // local-action looks for a package.json from the action folder up to pick the package manager.
  await writeFile(
    join(actionDir, 'package.json'),
    '{ "name": "epicflow-action", "private": true, "type": "module" }\n',
  );
  await buildBundle(join(actionDir, 'dist'), 'module');
  w = await startWorld();
}, 360_000);
afterAll(async () => {
  await w.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('the bundled action run by @github/local-action', () => {
  it('refuses missing inputs: failed step, summary naming each input, no stack trace', async () => {
    const job = await runBundled({
      name: 'bad-input',
      workspace: w.dir,
      inputs: { mode: 'story', 'github-token': w.bot.token },
    });
    // On a mismatch jest prints the whole run: its log, outputs and summary.
    expect(job).toMatchObject({ code: 1 });
    expect(job.stdout).toContain('::error::invalid inputs of the epicflow action');
    expect(job.summary).toContain('epicflow: the action could not run');
    for (const input of ['epic', 'story', 'attempt']) {
      expect(job.summary).toContain(`input "${input}" is required in story mode`);
    }
    // A user error, not a crash. (local-action itself prints the failed child's stack after.)
    expect(actionLog(job.stdout)).not.toMatch(/\n\s+at .+:\d+:\d+/);
    // The token is masked before anything else is printed.
    expect(job.stdout).toContain(`::add-mask::${w.bot.token}`);
  }, 360_000);

  it("runs one story's two jobs: merged on the epic branch over HTTP git, recorded, outputs and summary written", async () => {
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    const { runId } = dispatchOf(w, epic, 'cart');
    const work = await runBundled({
      name: 'cart',
      workspace: await checkout(w, 'cart'),
      inputs: { ...storyInputs(w, epic, 'cart'), phase: 'work' },
      runId,
    });
    expect(work).toMatchObject({ code: 0, outputs: { status: 'done', 'merge-sha': '' } });
    const result = work.outputs['result'] ?? '';
    expect(existsSync(join(result, 'result.json'))).toBe(true);
    const job = await runBundled({
      name: 'cart-publish',
      workspace: w.dir,
      inputs: { ...storyInputs(w, epic, 'cart'), phase: 'publish', result },
      runId,
    });
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    expect(job).toMatchObject({
      code: 0,
      outputs: { status: 'done', 'merge-sha': head, executor: 'scripted', tokens: '1500' },
    });
    expect(work.stdout).toContain('cart: merged into epic/');
    expect(job.stdout).toContain('cart: merged into epic/');
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toContain(
      'export const story',
    );
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'done', mergeCommit: head });
    expect(job.summary).toContain('epicflow: story `cart` of epic #');
    expect(job.summary).toContain('| status | done |');
  }, 540_000);
});

describe('the source run by @github/local-action (the debugging loop)', () => {
  it('refuses missing inputs through local-action’s @actions/core stub', async () => {
    const summary = join(scratch, 'source-summary.md');
    await writeFile(summary, '');
    const run = await localAction(ROOT, 'src/action/run.ts', join(scratch, 'source.env'), {
      INPUT_MODE: 'story',
      'INPUT_GITHUB-TOKEN': 'ghs_local0000000000000000',
      GITHUB_STEP_SUMMARY: summary,
    });
    // The stub reports the failure; it does not set the exit code as a runner would.
    expect(run.stdout).toContain('::error::invalid inputs of the epicflow action');
    const text = await readFile(summary, 'utf8');
    expect(text).toContain('epicflow: the action could not run');
    expect(text).toContain('input "epic" is required in story mode');
  }, 360_000);
});
