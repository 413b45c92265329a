/**
 * The action's source run through `@github/local-action` (GitHub's local
 * runner for JavaScript actions): it reads `action.yml`, takes inputs from a
 * dotenv file, swaps `@actions/core` for its own stub and calls the exported
 * `run()` of the logic entry (`src/action/run.ts`; `main.ts` only calls it).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import {
  OWNER,
  REPO,
  checkout,
  dispatchOf,
  planBody,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
} from './support/world.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LOCAL_ACTION = join(ROOT, 'node_modules/@github/local-action/bin/local-action.js');

interface LocalRun {
  readonly output: string;
  readonly summary: string;
}

/** `local-action run <repo root> src/action/run.ts <dotenv>` with these variables in the dotenv file. */
async function localAction(dir: string, vars: Record<string, string>): Promise<LocalRun> {
  const summary = join(dir, 'summary.md');
  await writeFile(summary, '');
  const dotenv = join(dir, '.env');
  const all = { ...vars, GITHUB_STEP_SUMMARY: summary };
  await writeFile(
    dotenv,
    Object.entries(all)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join('\n'),
  );
  // local-action exits 0 even when the action fails: the failure shows in its output and summary.
  const output = await new Promise<string>((done) => {
    execFile(
      process.execPath,
      [LOCAL_ACTION, 'run', ROOT, 'src/action/run.ts', dotenv],
      {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: process.env['HOME'] ?? tmpdir(),
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_TERMINAL_PROMPT: '0',
          NO_COLOR: '1',
        },
        maxBuffer: 16 * 1024 * 1024,
      },
      (_error, stdout, stderr) => done(stdout + stderr),
    );
  });
  return { output, summary: await readFile(summary, 'utf8') };
}

let w: ActionWorld;
let scratch: string;
beforeAll(async () => {
  w = await startWorld();
  scratch = await mkdtemp(join(tmpdir(), 'epicflow-local-action-'));
});
afterAll(async () => {
  await w.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('the action run by @github/local-action', () => {
  it('refuses missing inputs with a summary naming each one', async () => {
    const run = await localAction(scratch, {
      INPUT_MODE: 'story',
      'INPUT_GITHUB-TOKEN': 'ghs_local0000000000000000',
    });
    expect(run.output).toContain('::error::invalid inputs of the epicflow action');
    expect(run.summary).toContain('epicflow: the action could not run');
    for (const input of ['epic', 'story', 'attempt']) {
      expect(run.summary).toContain(`input "${input}" is required in story mode`);
    }
    expect(run.output).not.toMatch(/\n\s+at .+:\d+:\d+/);
  }, 90_000);

  it('runs one story against GitHub: merged on the epic branch and recorded', async () => {
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    const workspace = await checkout(w, 'cart');
    const inputs = storyInputs(w, epic, 'cart');
    const jobDir = await mkdtemp(join(scratch, 'job-'));
    const run = await localAction(jobDir, {
      ...Object.fromEntries(
        Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v]),
      ),
      GITHUB_ACTIONS: 'true',
      GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
      GITHUB_SERVER_URL: w.gh.url,
      GITHUB_API_URL: w.gh.url,
      GITHUB_WORKSPACE: workspace,
      RUNNER_TEMP: jobDir,
      GITHUB_RUN_ID: String(dispatchOf(w, epic, 'cart').runId),
      GITHUB_EVENT_NAME: 'workflow_dispatch',
      EPICFLOW_GITHUB_THROTTLE: 'off',
      GIT_AUTHOR_NAME: 'Runner',
      GIT_AUTHOR_EMAIL: 'runner@example.com',
      GIT_COMMITTER_NAME: 'Runner',
      GIT_COMMITTER_EMAIL: 'runner@example.com',
    });
    expect(run.output).toContain('cart: merged into epic/');
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toContain(
      'export const story',
    );
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'done', mergeCommit: head });
    expect(run.summary).toContain('| status | done |');
    w.gh.assertNoViolations();
  }, 120_000);
});
