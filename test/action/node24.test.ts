/**
 * The bundle on the runtime action.yml declares (`runs.using: node24`). The
 * other Action tests run it on the Node that runs the tests (20 on our
 * machines); here the same bundle runs under a real Node 24 binary: bad
 * input, one story job end to end over HTTP git, and orchestrate mode.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { NODE24_VERSION, ensureNode24 } from '../support/node24.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  dispatched,
  planBody,
  runJob,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
} from './support/world.js';
import { deliveredPayload } from './support/epic.js';

/**
 * Loaded into the job's process before the bundle: prints the version that
 * process runs on as a runner debug line (the bundle itself does not log it).
 */
const VERSION_PROBE = `--import=data:text/javascript,${encodeURIComponent(
  "process.stdout.write('::debug::node ' + process.version + '\\n');",
)}`;

let node24: string;
let bundleDir: string;
let bundle: string;

beforeAll(async () => {
  // The first run downloads Node 24 from the npm registry (~50 MB); later runs reuse the cache.
  [node24, bundleDir] = await Promise.all([
    ensureNode24(),
    mkdtemp(join(tmpdir(), 'epicflow-bundle-')),
  ]);
  bundle = await buildBundle(bundleDir);
}, 900_000);
afterAll(async () => {
  await rm(bundleDir, { recursive: true, force: true });
});

describe('the bundle on Node 24', () => {
  let w: ActionWorld;
  beforeAll(async () => {
    w = await startWorld();
  });
  afterAll(async () => {
    await w.close();
  });

  it('is a real Node 24', async () => {
    const { stdout } = await promisify(execFile)(node24, ['--version']);
    expect(stdout.trim()).toBe(`v${NODE24_VERSION}`);
  });

  it('refuses missing inputs: failed step, summary naming each input', async () => {
    const job = await runJob(w, bundle, {
      name: 'bad-input',
      workspace: w.dir,
      inputs: { mode: 'story', 'github-token': w.bot.token },
      node: node24,
      nodeArgs: [VERSION_PROBE],
    });
    // On a mismatch jest prints the whole job: its log, outputs and summary.
    expect(job).toMatchObject({ code: 1 });
    expect(job.stdout).toContain(`::debug::node v${NODE24_VERSION}\n`);
    expect(job.stdout).toContain('::error::invalid inputs of the epicflow action');
    expect(job.summary).toContain('epicflow: the action could not run');
    for (const input of ['epic', 'story', 'attempt']) {
      expect(job.summary).toContain(`input "${input}" is required in story mode`);
    }
    // A user error, not a crash: no stack trace.
    expect(job.stdout + job.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it('runs one story job: merged on the epic branch over HTTP git, recorded, reported', async () => {
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    expect(dispatched(w, epic)).toEqual(['cart#1']);
    const job = await runJob(w, bundle, {
      name: 'cart',
      workspace: await checkout(w, 'cart'),
      inputs: storyInputs(w, epic, 'cart'),
      runId: dispatchOf(w, epic, 'cart').runId,
      node: node24,
    });
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    expect(job).toMatchObject({
      code: 0,
      stderr: '',
      outputs: { status: 'done', 'merge-sha': head, executor: 'scripted' },
    });
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toContain(
      'export const story',
    );
    expect(job.summary).toContain('epicflow: story `cart` of epic #');
    expect(job.summary).toContain('| status | done |');
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'done', mergeCommit: head });
  }, 360_000);

  it('orchestrate mode: an `epic` label dispatches the first story', async () => {
    const body = planBody([{ id: 'search' }, { id: 'filters', dependsOn: ['search'] }]);
    const issue = w.gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Catalogue',
      body,
      author: 'alice',
    });
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: issue.number, label: 'epic' });
    const event = join(w.dir, 'labeled.json');
    await writeFile(event, JSON.stringify(await deliveredPayload(w.gh, 'issues', 'labeled')));
    const job = await runJob(w, bundle, {
      name: 'labeled',
      workspace: w.dir,
      inputs: { mode: 'orchestrate', 'github-token': w.bot.token, 'bot-login': 'epicflow[bot]' },
      env: { GITHUB_EVENT_NAME: 'issues', GITHUB_EVENT_PATH: event },
      node: node24,
      nodeArgs: [VERSION_PROBE],
    });
    expect(job).toMatchObject({ code: 0, outputs: { status: 'reconciled' } });
    expect(job.stdout).toContain(`::debug::node v${NODE24_VERSION}\n`);
    expect(dispatched(w, issue.number)).toEqual(['search#1']);
    expect(
      w.gh.state.comments(OWNER, REPO, issue.number).some((c) => c.author === 'epicflow[bot]'),
    ).toBe(true);
  });
});
