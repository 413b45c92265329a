/**
 * A story runs as two jobs of one workflow run: the work job (the agent, gates, judge and
 * merge, with a token that can only read) and the publish job (the write credential, no
 * checkout, nothing of the repository run). Each way a runner runs it — as root with the
 * job's token, and as an unprivileged runner with passwordless sudo with the App's key —
 * a hostile coder (support/splitter.mjs) nests a repository with a filter in its story's tree
 * and tries to hand over a result of its own. While the work job runs, every process of it is
 * searched for a write credential, and its folders after it: none is there (the publish
 * job's process holds one: the search finds what it looks for). No filter of the nested
 * repository runs, it is never committed, and only checked commits merge: the story merges
 * as epicflow's work job handed it over, not as the agent's forgery.
 * As root with the job's token the same agent also searches for credentials itself
 * (support/thief.mjs) in a runner's environment around it — the job's token,
 * ACTIONS_RUNTIME_TOKEN, an OIDC request token, a runner home with a .git-credentials and an
 * .npmrc, the event file — by every route it knows: its own environment, /proc/<pid>/environ
 * and /proc/<ppid>/mem of every process, sudo, git's configuration, the runner's files, and a
 * process left behind to try again while the job pushes. It writes what it found into a file
 * its story owns, which is merged: every route refused, and nothing secret lands anywhere
 * (the files of every branch, the commit messages, the comments, the issues, the log and the
 * summary).
 * Then the publish job's refusals through the shell: a re-run of the attacked story's publish
 * job after it was published (stale), and, in one world, a workflow of one job and an event
 * other than a dispatch. Two publish jobs of one result racing, and a malformed result record,
 * are the publish job's own (test/orchestrator/publish-result.test.ts, in-process); the shell
 * fails the step and saves the record for a refused result as for a killed work job's missing
 * one (killed-job.test.ts).
 *
 * @needs root sudo
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freshAppKey } from '../support/app-key.js';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { agentScript } from './support/agents.js';
import { dispatchEvent } from './support/dispatch-event.js';
import { filesHolding, watch } from './support/process-search.js';
import { sudoer, type RunnerUser } from './support/runner-users.js';
import {
  buildBundle,
  checkout,
  dispatchOf,
  git,
  OWNER,
  planBody,
  REPO,
  runJob,
  runStep,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';

const run = promisify(execFile);
const SPLITTER = agentScript('splitter.mjs');
const THIEF = agentScript('thief.mjs');
const APP_ID = 777;
const RUNTIME_TOKEN = 'runtime-token-of-the-work-job-3c1d';
const OIDC_TOKEN = 'oidc-request-token-must-not-leak-77aa';
const GIT_CREDENTIAL = 'ghp_gitcredentialsmustnotleak0001';
const NPM_TOKEN = 'npm_npmrcmustnotleak0002';

/**
 * The splitter, then the thief (support/thief.mjs) in its place (`exec`: the thief's parent is
 * the process epicflow started the agent from), in one turn of one story.
 */
const RAID = 'node "$1" "$3" "$6" && exec node "$2" "$3" "$4" "$5" "$6" /root';

let bundleDir: string;
let bundle: string;
beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-split-bundle-'));
  bundle = await buildBundle(bundleDir);
});
afterAll(async () => {
  await rm(bundleDir, { recursive: true, force: true });
});

let w: ActionWorld;

/** Where a runner's home is, beside the scripted agents' dump folder. */
function runnerHome(dumps: string): string {
  return join(dumps, '..', 'runner-home');
}

/**
 * A runner's home with a .git-credentials and an .npmrc, and the event file it writes: the
 * job's environment for them.
 */
async function runnerWorld(inputs: Record<string, string>): Promise<Record<string, string>> {
  const home = runnerHome(w.dumps);
  await mkdir(home, { recursive: true });
  await writeFile(
    join(home, '.git-credentials'),
    `https://x-access-token:${GIT_CREDENTIAL}@github.com\n`,
    { mode: 0o600 },
  );
  await writeFile(join(home, '.npmrc'), `//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n`, {
    mode: 0o600,
  });
  await chmod(home, 0o700);
  // The event file the runner writes, in the job's world the agent rummages through.
  return { HOME: home, GITHUB_EVENT_PATH: await dispatchEvent(w, 'nest', inputs) };
}

/** Everything the job left on GitHub and in its log, as one text. */
async function everythingWritten(job: JobRun): Promise<string> {
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
  return [...files, messages, ...comments, ...issues, log, job.stderr, job.summary].join('\n');
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

interface Mode {
  readonly runner: 'root' | 'sudo';
  readonly credentials: 'token' | 'app';
  /**
   * The agent first searches for credentials (support/thief.mjs) in a runner's environment:
   * its home with a .git-credentials and an .npmrc, an OIDC request token, the event file.
   */
  readonly thief?: boolean;
}

interface Attacked {
  readonly epic: number;
  readonly job: JobRun;
  /** What the search of the work job's processes read and found, and of the publish job's. */
  readonly watched: { read: number; found: string[] };
  readonly publishWatched: { read: number; found: string[] };
  readonly secrets: () => string[];
}

async function attack(mode: Mode): Promise<Attacked> {
  const agent = (dumps: string): string[] => {
    const dir = join(dumps, '..');
    return mode.thief === true
      ? [
          'sh',
          '-c',
          RAID,
          'raid',
          SPLITTER,
          THIEF,
          dumps,
          runnerHome(dumps),
          join(dir, 'jobs'),
          dir,
        ]
      : ['node', SPLITTER, dumps, dir];
  };
  w = await startWorld({
    config: (dumps) =>
      [
        'executors:',
        '  - id: splitter',
        '    harness: command',
        `    command: ${JSON.stringify(agent(dumps))}`,
        'gates: ["sh check.sh"]',
        'fixRounds: 0',
        '',
      ].join('\n'),
  });
  // One story does both: it nests the repository and plants its results (the story merges).
  const epic = await startEpic(w, planBody([{ id: 'nest' }]));
  let key: { pkcs1: string; pkcs8: string } | undefined;
  if (mode.credentials === 'app') {
    key = freshAppKey();
    w.gh.seed.app({ id: APP_ID, slug: 'epicflow', privateKey: key.pkcs8 });
  }
  const pemLines = (key?.pkcs1 ?? '')
    .split('\n')
    .filter((l) => l.length > 20 && !l.startsWith('-----'));
  const secrets = (): string[] => {
    const tokens = [w.bot.token, ...w.gh.state.installationTokens().map((t) => t.token)];
    return [
      ...tokens,
      ...tokens.map((t) => Buffer.from(`x-access-token:${t}`).toString('base64')),
      ...pemLines,
    ];
  };
  let runner: RunnerUser | undefined;
  // The runner's files are its own: the bundle it runs, its workspaces, its temp folders.
  const own = mode.runner === 'sudo' ? await buildBundle(join(w.dir, 'bundle')) : bundle;
  if (mode.runner === 'sudo') {
    runner = await sudoer('epicflow-test-sudoer');
    await run('chown', ['-R', `${runner.uid}:${runner.gid}`, w.dir]);
    await chmod(w.dir, 0o755);
    await chmod(w.dumps, 0o1777);
  }
  const workspace = await checkout(w, 'nest');
  if (runner !== undefined) await run('chown', ['-R', `${runner.uid}:${runner.gid}`, workspace]);
  const base = storyInputs(w, epic, 'nest');
  const { 'github-token': _t, ...rest } = base;
  const inputs =
    key === undefined ? base : { ...rest, 'app-id': String(APP_ID), 'app-private-key': key.pkcs1 };
  let env: Record<string, string> = { HOME: workspace, ACTIONS_RUNTIME_TOKEN: RUNTIME_TOKEN };
  if (mode.thief === true) {
    env = {
      ...env,
      ...(await runnerWorld(inputs)),
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: OIDC_TOKEN,
      ACTIONS_ID_TOKEN_REQUEST_URL: 'http://127.0.0.1:9/token',
    };
  }
  const work = watch(secrets);
  const publish = watch(secrets);
  const job = await runJob(w, own, {
    name: 'nest',
    workspace,
    inputs,
    runId: dispatchOf(w, epic, 'nest').runId,
    env,
    onSpawn: work.onSpawn,
    onPublishSpawn: publish.onSpawn,
    ...(runner === undefined ? {} : { asUser: runner }),
  });
  return {
    epic,
    job,
    watched: await work.result(),
    publishWatched: await publish.result(),
    secrets,
  };
}

async function expectHeld(a: Attacked): Promise<void> {
  const { epic, job } = a;
  const log = readFileSync(join(w.dumps, 'splitter-nest.log'), 'utf8');
  // It really tried.
  expect(log).toContain('nest a repository with a filter: done');
  expect(log).toMatch(/plant a result in .*: /);
  // The agent never saw the runtime token that would upload an artifact.
  expect(log).toContain('runtime token: absent');
  expect(log).toContain('results url: absent');

  // No write credential in any process of the work job, nor in its folders; the publish
  // job's own process holds one (the search can find what it looks for).
  expect(a.watched.read).toBeGreaterThan(3);
  expect(a.watched.found).toEqual([]);
  expect(a.publishWatched.found.length).toBeGreaterThan(0);
  expect(await filesHolding(join(w.dir, 'jobs', 'nest'), a.secrets())).toEqual([]);
  // No filter of the nested repository ran as anyone holding one; it ran not at all.
  const ran = readdirSync(w.dumps).filter((f) => f.startsWith('filter-ran-'));
  for (const f of ran) {
    const text = readFileSync(join(w.dumps, f), 'utf8');
    for (const s of a.secrets()) expect(text.includes(s)).toBe(false);
  }
  expect(ran).toEqual([]);

  // The nested repository is left out of its story's commit with a note: never entered,
  // never a gitlink; the rest of the story merges.
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  expect(job.outputs['status']).toBe('done');
  const nest = (await store.read('nest'))?.record;
  expect(nest?.notes.join('\n')).toContain('left out src/nest/nested');
  const tree = (
    await run('git', ['ls-tree', '-r', `epic/${epic}`], {
      cwd: w.gh.state.repoDir(OWNER, REPO),
    })
  ).stdout;
  expect(tree.split('\n').filter((l) => l.startsWith('160000'))).toEqual([]);
  expect(tree).toContain('src/nest/index.js');
  expect(tree).not.toContain('src/nest/nested');

  // It merges as epicflow's work job handed it over, not as the agent's forgery.
  expect(nest).toMatchObject({ status: 'done', executors: ['splitter'] });
  expect(JSON.stringify(nest)).not.toContain('FORGED');
  expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/nest/index.js')).toBe(
    'export const story = "nest";\n',
  );
  const handed = JSON.parse(
    await readFile(join(w.dir, 'jobs', 'nest-publish', 'artifact', 'result.json'), 'utf8'),
  ) as { storyCommit: string; record: Record<string, unknown> };
  expect(handed.record['forged']).toBeUndefined();
  expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/nest`)).toBe(handed.storyCommit);
}

describe('a story in a work job and a publish job, attacked', () => {
  afterEach(async () => {
    await w?.close();
  });

  it('as root with the job token: the agent finds no credential anywhere, none is in the work job, nothing secret is written, only checked commits merge', async () => {
    const a = await attack({ runner: 'root', credentials: 'token', thief: true });
    await expectHeld(a);
    // What the thief found is in a file its story owns, merged: every route refused.
    const loot = await w.gh.state.file(OWNER, REPO, `epic/${a.epic}`, 'src/nest/loot.txt');
    expectRefused(loot ?? '');
    const everything = await everythingWritten(a.job);
    for (const s of [...a.secrets(), RUNTIME_TOKEN, OIDC_TOKEN, GIT_CREDENTIAL, NPM_TOKEN])
      expect({ secret: s, leaked: everything.includes(s) }).toEqual({ secret: s, leaked: false });
    await expectLeftoverEnded();

    // A re-run of its publish job after the story was published: refused as stale, nothing
    // moves. (Two publish jobs of one result racing: test/orchestrator/publish-result.test.ts.)
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${a.epic}`);
    const store = new GitHubStateStore({ repo: w.repo, epic: String(a.epic) });
    const record = (await store.read('nest'))?.record;
    expect(record).toMatchObject({ status: 'done', mergeCommit: head });
    const workspace = join(w.dir, 'publish-again');
    await mkdir(workspace, { recursive: true });
    const again = await runStep(w, bundle, {
      name: 'nest-publish-again',
      workspace,
      inputs: {
        ...storyInputs(w, a.epic, 'nest'),
        phase: 'publish',
        result: join(w.dir, 'jobs', 'nest-publish', 'artifact'),
      },
      runId: dispatchOf(w, a.epic, 'nest').runId,
    });
    expect(again.code).not.toBe(0);
    expect(again.summary).toMatch(/story nest of epic #\d+ is (done|at attempt)/);
    expect(await w.gh.state.ref(OWNER, REPO, `epic/${a.epic}`)).toBe(head);
    expect((await store.read('nest'))?.record).toEqual(record);
  }, 600_000);

  it("on a runner with passwordless sudo with the App's key: the same", async () => {
    const a = await attack({ runner: 'sudo', credentials: 'app' });
    await expectHeld(a);
    // The publish job minted the App's tokens; the work job had none to mint with.
    expect(w.gh.state.installationTokens().length).toBeGreaterThan(0);
    expect(a.job.work?.stdout).not.toContain('::add-mask::-----');
  }, 600_000);
});

// Each refusal on a story of its own, in one epic.
describe('the publish job refuses a result it cannot trust, on the story', () => {
  let epic: number;
  beforeAll(async () => {
    w = await startWorld();
    epic = await startEpic(w, planBody([{ id: 'pay' }, { id: 'ship' }]));
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  async function expectNothingPushed(story: string): Promise<void> {
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/${story}`)).toBeUndefined();
    expect(
      await w.gh.state.file(OWNER, REPO, `epic/${epic}`, `src/${story}/index.js`),
    ).toBeUndefined();
  }

  it('a story dispatched to a workflow of one job: refused, saying what to update', async () => {
    const job = await runStep(w, bundle, {
      name: 'pay',
      workspace: await checkout(w, 'pay'),
      inputs: storyInputs(w, epic, 'pay'),
      runId: dispatchOf(w, epic, 'pay').runId,
    });
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain('runs it in one job, with the write credential beside the agent');
    expect(job.summary).toContain('.github/workflows/epicflow-story.yml');
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('pay'))?.record).toMatchObject({ status: 'failed' });
    expect((await store.read('pay'))?.record.reason).toContain('epicflow init --force');
    await expectNothingPushed('pay');
    // The agent never ran.
    expect(existsSync(join(w.dumps, 'pay.json'))).toBe(false);
  }, 120_000);

  it('an event other than a dispatch (a pull request) never reaches the write credential', async () => {
    const workspace = join(w.dir, 'empty');
    const artifact = join(w.dir, 'artifact');
    await mkdir(workspace, { recursive: true });
    await mkdir(artifact, { recursive: true });
    const job = await runStep(w, bundle, {
      name: 'ship-publish',
      workspace,
      inputs: { ...storyInputs(w, epic, 'ship'), phase: 'publish', result: artifact },
      runId: dispatchOf(w, epic, 'ship').runId,
      env: { GITHUB_EVENT_NAME: 'pull_request' },
    });
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain(
      'the publish job runs only for workflow_dispatch, not pull_request',
    );
    await expectNothingPushed('ship');
  }, 120_000);
});
