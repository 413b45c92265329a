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
 * developer's debugging loop: the story's publish job runs from it, so one start
 * shows both that the loop works and that the work job's hand-over publishes. With
 * the stubs, outputs are local-action's (`::set-output` lines in its log) and the
 * summary is written by its `core.summary` stub.
 *
 * Each local-action start costs about 5 s of CPU (`npm exec tsx`, `npm ls` over the
 * project's tree): three starts, one per thing only local-action shows (a failed
 * bundled step, a bundled step that works, the source). The publish job's bundled
 * run is `story.test.ts`'s (`dist/index.js`: the same bundle, calling `run()` itself).
 *
 * @needs root
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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
function runBundled(job: JobSpec): Promise<JobRun> {
  return runLocal(job, actionDir, 'dist/run.js');
}

/**
 * The source through local-action, from the repository root (the debugging loop): its
 * `@actions/core` is local-action's stub, so the outputs are the `::set-output` lines it logs.
 */
async function runSource(job: JobSpec): Promise<JobRun> {
  const run = await runLocal(job, ROOT, 'src/action/run.ts');
  expect(run.outputs).toEqual({});
  const outputs: Record<string, string> = {};
  for (const m of run.stdout.matchAll(/^::set-output name=([^:]+)::(.*)$/gm)) {
    outputs[m[1] ?? ''] = m[2] ?? '';
  }
  return { ...run, outputs };
}

async function runLocal(job: JobSpec, dir: string, entrypoint: string): Promise<JobRun> {
  const prepared = await prepareJob(w, job);
  // PATH and HOME stay local-action's own (it runs npm); the rest is the runner's.
  const { PATH: _path, HOME: _home, ...vars } = prepared.env;
  const run = await localAction(dir, entrypoint, join(scratch, `${job.name}.env`), vars);
  return jobResult(prepared, run);
}

let w: ActionWorld;
let scratch: string;
/** A released action's layout: `action.yml` at the top, the bundle in `dist/`. */
let actionDir: string;
/** The story the bundled work job handed over, for its publish job from the source. */
let cart: { epic: number; runId: number; result: string } | undefined;

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

  it("runs a story's work job: done, its hand-over in the result folder, outputs and summary written", async () => {
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
    expect(work.stdout).toContain('cart: merged into epic/');
    expect(work.summary).toContain('epicflow: story `cart` of epic #');
    // The stub never reached the bundle's own `@actions/core`: local-action's table is empty.
    expect(work.stdout).toContain('No outputs were set!');
    cart = { epic, runId, result };
  }, 540_000);
});

describe('the source run by @github/local-action (the debugging loop)', () => {
  it("publishes the bundled work job's story: merged on the epic branch over HTTP git, recorded, outputs through the stub and summary written", async () => {
    expect(cart).toBeDefined();
    const { epic, runId, result } = cart ?? { epic: 0, runId: 0, result: '' };
    const job = await runSource({
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
    expect(job.stdout).toContain('cart: merged into epic/');
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toContain(
      'export const story',
    );
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'done', mergeCommit: head });
    expect(job.summary).toContain('epicflow: story `cart` of epic #');
    expect(job.summary).toContain('| status | done |');
  }, 360_000);
});
