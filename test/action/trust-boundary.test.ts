/**
 * The agent never reaches a credential. A prompt-injected agent (support/thief.mjs)
 * runs in a story job of the bundle with a runner's environment around it — the
 * job's token, ACTIONS_RUNTIME_TOKEN, an OIDC request
 * token, a runner home with a .git-credentials and an .npmrc — and tries every
 * route it knows: its own environment, /proc/<pid>/environ and /proc/<ppid>/mem of
 * every process, sudo, git's configuration, the runner's files, and a process left
 * behind to try again while the job pushes. It writes everything it found into a
 * file the story owns, which is merged. Nothing secret lands anywhere: not in that
 * file, the branches, the records, the comments, the summary or the log.
 * With the App's private key the work job holds no key and no token at all: every process
 * of it is searched for one while it runs (work-publish.test.ts, sudo with the App's key),
 * and the agent's environment and the job's log and summary are searched for the key and
 * the tokens minted (app-token.test.ts).
 *
 * @needs root
 */
import { agentScript } from './support/agents.js';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  buildBundle,
  checkout,
  configText,
  dispatchOf,
  git,
  OWNER,
  planBody,
  REPO,
  runJob,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';
import { dispatchEvent } from './support/dispatch-event.js';

const run = promisify(execFile);
const THIEF = agentScript('thief.mjs');

const RUNTIME_TOKEN = 'runtime-token-must-not-leak-5e1f';
const OIDC_TOKEN = 'oidc-request-token-must-not-leak-77aa';
const GIT_CREDENTIAL = 'ghp_gitcredentialsmustnotleak0001';
const NPM_TOKEN = 'npm_npmrcmustnotleak0002';

let bundle: string;
beforeAll(async () => {
  bundle = await buildBundle(join(await tmpFolder(), 'bundle'));
});

async function tmpFolder(): Promise<string> {
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  return mkdtemp(join(tmpdir(), 'epicflow-trust-'));
}

let w: ActionWorld;
afterEach(async () => {
  await w.close();
});

/** A world whose only executor is the thief, told where a runner's files usually are. */
async function thiefWorld(): Promise<{ runnerHome: string }> {
  let runnerHome = '';
  w = await startWorld({
    config: (dumps) => {
      const dir = dirname(dumps);
      runnerHome = join(dir, 'runner-home');
      return configText(dumps, {}).replace(
        /command: .*/,
        // The job's whole world: the runner's home and temp folders, event files, checkouts.
        `command: ${JSON.stringify(['node', THIEF, dumps, runnerHome, join(dir, 'jobs'), dir, '/root'])}`,
      );
    },
  });
  await mkdir(runnerHome, { recursive: true });
  await writeFile(
    join(runnerHome, '.git-credentials'),
    `https://x-access-token:${GIT_CREDENTIAL}@github.com\n`,
    { mode: 0o600 },
  );
  await writeFile(join(runnerHome, '.npmrc'), `//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n`, {
    mode: 0o600,
  });
  await chmod(runnerHome, 0o700);
  return { runnerHome };
}

/** Every credential of the job, in the forms it could leak in. */
function secrets(): string[] {
  const tokens = [w.bot.token, ...w.gh.state.installationTokens().map((t) => t.token)];
  return [
    ...tokens,
    ...tokens.map((t) => Buffer.from(`x-access-token:${t}`).toString('base64')),
    RUNTIME_TOKEN,
    OIDC_TOKEN,
    GIT_CREDENTIAL,
    NPM_TOKEN,
  ];
}

/** Everything the job left on GitHub and in its log, as one text. */
async function everythingWritten(epic: number, job: JobRun): Promise<string> {
  const dir = w.gh.state.repoDir(OWNER, REPO);
  const refs = (await git(dir, 'for-each-ref', '--format=%(refname)')).split('\n');
  // Every file of every branch (the story and epic branches, the state branch), and every message.
  const files = await Promise.all(
    refs.map((r) => git(dir, 'grep', '-I', '-h', '-e', '.', r, '--').catch(() => '')),
  );
  const messages = await git(dir, 'log', '--all', '--format=%B');
  const comments = w.gh.state.comments(OWNER, REPO).map((c) => c.body);
  const issues = w.gh.state.issues(OWNER, REPO).map((i) => `${i.title}\n${i.body ?? ''}`);
  const log = job.stdout
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
  void epic;
  return [...files, messages, ...comments, ...issues, log, job.stderr, job.summary].join('\n');
}

async function steal(
  inputs: (epic: number) => Record<string, string>,
): Promise<{ loot: string; everything: string; job: JobRun }> {
  const { runnerHome } = await thiefWorld();
  const epic = await startEpic(w, planBody([{ id: 'cart' }]));
  const jobInputs = inputs(epic);
  const job = await runJob(w, bundle, {
    name: 'cart',
    workspace: await checkout(w, 'cart'),
    inputs: jobInputs,
    runId: dispatchOf(w, epic, 'cart').runId,
    env: {
      // The event file the runner writes, in the job's world the agent rummages through.
      GITHUB_EVENT_PATH: await dispatchEvent(w, 'cart', jobInputs),
      HOME: runnerHome,
      ACTIONS_RUNTIME_TOKEN: RUNTIME_TOKEN,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: OIDC_TOKEN,
      ACTIONS_ID_TOKEN_REQUEST_URL: 'http://127.0.0.1:9/token',
    },
  });
  expect({ code: job.code, status: job.outputs['status'] }).toEqual({ code: 0, status: 'done' });
  const loot = (await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/loot.txt')) ?? '';
  return { loot, everything: await everythingWritten(epic, job), job };
}

/** The thief really tried: each route is in its loot, refused. */
function expectRefused(loot: string): void {
  expect(loot).toMatch(/== whoami\nuid=\d+\(epicflow-agent(-\d+)?\)/);
  expect(loot).toMatch(/== parent environ\nDENIED EACCES/);
  expect(loot).toMatch(/== parent memory\nDENIED EACCES/);
  expect(loot).toMatch(/== sudo\nFAILED/);
  expect(loot).toMatch(/== git extraheader\nFAILED 1/);
  expect(loot).toMatch(/runner-home: DENIED EACCES/);
  expect(loot).toMatch(/\/root: DENIED EACCES/);
  // The environ of every process it could read is its own user's: no other was readable.
  const read = [...loot.matchAll(/== environ of (\d+)\n/g)].length;
  expect(read).toBeGreaterThan(0);
  expect(loot).not.toMatch(/== environ of \d+\n[^=]*ACTIONS_RUNTIME_TOKEN/);
}

/** The process the thief left behind was ended with its turn: it never wrote again. */
async function expectLeftoverEnded(): Promise<void> {
  const pid = Number(readFileSync(join(w.dumps, 'later.pid'), 'utf8'));
  expect(
    existsSync(`/proc/${pid}/status`) &&
      !readFileSync(`/proc/${pid}/status`, 'utf8').includes('State:\tZ'),
  ).toBe(false);
  await delay(3500);
  expect(existsSync(join(w.dumps, 'later.txt'))).toBe(false);
}

describe('a prompt-injected agent in a story job', () => {
  it('with the job token: finds no credential anywhere, and nothing secret is written', async () => {
    const { loot, everything } = await steal((epic) => storyInputs(w, epic, 'cart'));
    expectRefused(loot);
    for (const s of secrets())
      expect({ secret: s, leaked: everything.includes(s) }).toEqual({ secret: s, leaked: false });
    await expectLeftoverEnded();
  }, 360_000);
});

// Opted in (`allow-unisolated-agent: true`), such a runner runs the story, and the summary and a
// warning say the agent was not isolated: isolation-modes.test.ts, on its run of that mode.
describe('a runner where no separate user can be had (no root, no passwordless sudo)', () => {
  /** A runner user of the test's own making: not root, not in sudoers (sudo is not even installed). */
  async function runnerUser(): Promise<{ uid: number; gid: number }> {
    const name = 'epicflow-test-runner';
    const id = (flag: string): Promise<string> =>
      run('id', [flag, name]).then((r) => r.stdout.trim());
    try {
      await id('-u');
    } catch {
      await run('useradd', ['--system', '--user-group', '--no-create-home', name]).catch(
        () => undefined,
      );
    }
    return { uid: Number(await id('-u')), gid: Number(await id('-g')) };
  }

  async function jobAsRunner(extra: Record<string, string>): Promise<JobRun> {
    w = await startWorld();
    const runner = await runnerUser();
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    const workspace = await checkout(w, 'cart');
    // The runner's files are its own: the bundle it runs, its workspace, its temp folder.
    const own = await buildBundle(join(w.dir, 'bundle'));
    await run('chown', ['-R', `${runner.uid}:${runner.gid}`, w.dir]);
    await chmod(w.dir, 0o755);
    return runJob(w, own, {
      name: 'cart',
      workspace,
      inputs: { ...storyInputs(w, epic, 'cart'), ...extra },
      runId: dispatchOf(w, epic, 'cart').runId,
      env: { HOME: workspace },
      asUser: runner,
    });
  }

  it('refuses to start the story, saying why and what would allow it', async () => {
    const job = await jobAsRunner({});
    expect(job.code).toBe(1);
    expect(job.outputs['status']).toBe('failed');
    expect(job.summary).toContain(
      'cannot run the agent as a separate user: epicflow runs without root and without passwordless sudo',
    );
    expect(await w.gh.state.ref(OWNER, REPO, 'story/1/cart')).toBeUndefined();
    expect(existsSync(join(w.dumps, 'cart.json'))).toBe(false);
  }, 360_000);
});
