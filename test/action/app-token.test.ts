/**
 * The action with the App's id and private key instead of a token: it finds
 * the App's installation, mints installation tokens for the repository itself
 * and mints new ones before they expire, so a story whose agent outlives a
 * token still pushes and records. Run from the bundle against the GitHub
 * double, which verifies the App's JWTs with the public half of a real RSA key
 * and refuses expired installation tokens as GitHub does.
 *
 * @needs root
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshAppKey } from '../support/app-key.js';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import {
  CODER,
  OWNER,
  REPO,
  buildBundle,
  checkout,
  dispatchOf,
  dispatched,
  planBody,
  runJob,
  runStep,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
} from './support/world.js';

const APP_ID = 777;
/** How long the coder of the refresh test works: longer than a token lives. */
const TOKEN_LIFETIME_MS = 8000;
const CODER_MS = TOKEN_LIFETIME_MS + 1000;

/** The inputs of the story workflow with the App's credentials instead of a token. */
function appInputs(
  w: ActionWorld,
  epic: number,
  story: string,
  key: string,
): Record<string, string> {
  const { 'github-token': _token, 'bot-login': _login, ...rest } = storyInputs(w, epic, story);
  // No bot-login: the action takes the App's own `<slug>[bot]` from its installation.
  return { ...rest, 'app-id': String(APP_ID), 'app-private-key': key };
}

/** The log without `::add-mask::` commands (the runner hides what they name). */
function unmasked(log: string): string {
  return log
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
}

/** Every credential the job could leak: the key's lines and each token minted, in both forms. */
function credentials(w: ActionWorld, key: string): string[] {
  const tokens = w.gh.state.installationTokens().map((t) => t.token);
  return [
    ...key.split('\n').filter((l) => l.length > 0 && !l.startsWith('-----')),
    ...tokens,
    ...tokens.map((t) => Buffer.from(`x-access-token:${t}`).toString('base64')),
  ];
}

/** A coder that works `ms` before doing what the scripted coder does. */
const SLOW_CODER = [
  "import { execFileSync } from 'node:child_process';",
  'const [ms, coder, ...rest] = process.argv.slice(2);',
  'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(ms));',
  "execFileSync(process.execPath, [coder, ...rest], { stdio: 'inherit' });",
  '',
].join('\n');

function slowConfig(dumps: string): string {
  const command = ['node', join(dumps, '..', 'slow-coder.mjs'), String(CODER_MS), CODER, dumps];
  return [
    'executors:',
    '  - id: scripted',
    '    harness: command',
    `    command: ${JSON.stringify(command)}`,
    'gates: ["sh check.sh"]',
    'fixRounds: 0',
    '',
  ].join('\n');
}

let bundleDir: string;
let bundle: string;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
});
afterAll(async () => {
  await rm(bundleDir, { recursive: true, force: true });
});

describe('story mode with app-id and app-private-key', () => {
  let w: ActionWorld;
  afterEach(async () => {
    await w.close();
  });

  // One run shows both: a story whose coder works longer than a token lives, its dependent
  // dispatched, with the key also in the step's environment.
  it('mints an installation token in the publish job only, merges and records a story whose agent outlives a token, and the agent sees neither the key nor a token', async () => {
    w = await startWorld({ config: slowConfig });
    await writeFile(join(w.dir, 'slow-coder.mjs'), SLOW_CODER);
    const key = freshAppKey();
    w.gh.seed.app({
      id: APP_ID,
      slug: 'epicflow',
      privateKey: key.pkcs8,
      tokenLifetimeMs: TOKEN_LIFETIME_MS,
    });
    const epic = await startEpic(w, planBody([{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }]));
    const job = await runJob(w, bundle, {
      name: 'cart',
      workspace: await checkout(w, 'cart'),
      inputs: appInputs(w, epic, 'cart', key.pkcs1),
      runId: dispatchOf(w, epic, 'cart').runId,
      // The workflow could hand the key to the step's environment too: it still stays out.
      env: { EPICFLOW_APP_KEY: key.pkcs1 },
    });
    expect(job.code).toBe(0);
    expect(job.outputs['status']).toBe('done');
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    expect(job.outputs['merge-sha']).toBe(head);
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toContain(
      'export const story',
    );
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/cart`)).toBeDefined();
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'done', mergeCommit: head });
    // Its own comments found by the App's login: the dependent is dispatched.
    expect(dispatched(w, epic)).toEqual(['cart#1', 'pay#1']);

    // The agent worked longer than a token lives: the work job holds none, and the publish
    // job minted its own when it started (each token masked in its log). A token used while it
    // has time left and minted again before it runs out: app-auth.test.ts.
    const minted = w.gh.state.installationTokens();
    expect(minted.length).toBeGreaterThanOrEqual(1);
    expect(w.gh.stats.rest['apps/create-installation-access-token']).toBe(minted.length);
    expect(job.work?.stdout).not.toMatch(/::add-mask::ghs_/);

    const seen = await readFile(join(w.dumps, 'cart.json'), 'utf8');
    const env = (JSON.parse(seen) as { env: Record<string, string> }).env;
    expect(Object.keys(env).filter((k) => /^INPUT_|APP_KEY/.test(k))).toEqual([]);
    const log = unmasked(job.stdout + job.stderr) + job.summary;
    for (const secret of credentials(w, key.pkcs1)) {
      expect(seen).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
    // Each was masked for the runner before anything could print it, by the publish job.
    for (const { token } of minted) {
      expect(job.publish?.stdout).toContain(`::add-mask::${token}`);
    }
  });
});

// The inputs' own refusals (no way to GitHub, both ways, half the App's pair, an app-id that is
// not one) are readInputs' (inputs.test.ts); a key that is not a key is appTokens'
// (test/adapters/github/app-auth.test.ts). The bundle's refusal is shown once, where GitHub
// answers: a failed step, the summary, no stack trace, no secret, nothing changed.
describe('the action refuses bad App credentials clearly, and changes nothing', () => {
  let w: ActionWorld;
  let epic: number;
  let key: { pkcs1: string; pkcs8: string };
  beforeAll(async () => {
    w = await startWorld();
    key = freshAppKey();
    w.gh.seed.app({ id: APP_ID, slug: 'epicflow', privateKey: key.pkcs8 });
    epic = await startEpic(w, planBody([{ id: 'cart' }]));
  });
  afterAll(async () => {
    await w.close();
  });

  async function refused(name: string, inputs: Record<string, string>): Promise<string> {
    const before = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    // The credentials are the publish job's: its step is the one that reads them.
    const job = await runStep(w, bundle, {
      name,
      workspace: await checkout(w, name),
      inputs: { ...inputs, phase: 'publish' },
    });
    expect(job.code).toBe(1);
    expect(await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(before);
    expect(await readdir(w.dumps).catch(() => [])).toEqual([]);
    expect(job.stdout).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
    const log = unmasked(job.stdout + job.stderr) + job.summary;
    for (const secret of credentials(w, key.pkcs1)) expect(log).not.toContain(secret);
    return job.summary;
  }

  it("another App's key: GitHub refuses the JWT, the summary says to check the pair", async () => {
    const summary = await refused('wrong-key', appInputs(w, epic, 'cart', freshAppKey().pkcs1));
    expect(summary).toContain(`cannot find the installation for App ${APP_ID} on ${OWNER}/${REPO}`);
    expect(summary).toContain('check that app-private-key belongs to app-id');
  });
});
