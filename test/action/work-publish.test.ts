/**
 * A story runs as two jobs of one workflow run: the work job (the agent, gates, judge and
 * merge, with a token that can only read) and the publish job (the write credential, no
 * checkout, nothing of the repository run). Each way a runner runs it — as root with the
 * job's token, and as an unprivileged runner with passwordless sudo with the App's key —
 * a hostile coder (support/splitter.mjs) nests a repository with a filter in its tree and
 * tries to hand over a result of its own. While the work job runs, every process of it is
 * searched for a write credential, and its folders after it: none is there (the publish
 * job's process holds one: the search finds what it looks for). No filter of the nested
 * repository runs, it is never committed, and only checked commits merge.
 * Then the publish job's refusals: a malformed result, two racing and a re-run after them
 * (one work job's result published three times), a workflow of one job, an event other than
 * a dispatch.
 *
 * @needs root sudo
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshAppKey } from '../support/app-key.js';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { agentScript } from './support/agents.js';
import { sudoer, type RunnerUser } from './support/runner-users.js';
import {
  buildBundle,
  checkout,
  dispatchOf,
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
const APP_ID = 777;
const RUNTIME_TOKEN = 'runtime-token-of-the-work-job-3c1d';

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
afterEach(async () => {
  await w?.close();
});

/** Every process that descends from `root`, by the kernel's own table. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}

/**
 * Searches every process of a job, as long as it runs, for `secrets` in its environment
 * and command line. Returns what it found and how many processes it read.
 */
function watch(secrets: () => readonly string[]): {
  readonly onSpawn: (child: ChildProcess) => void;
  readonly result: () => Promise<{ readonly read: number; readonly found: string[] }>;
} {
  let done: Promise<void> = Promise.resolve();
  let read = 0;
  const found = new Set<string>();
  return {
    onSpawn: (child) => {
      const pid = child.pid;
      if (pid === undefined) return;
      let running = true;
      child.on('close', () => (running = false));
      done = (async () => {
        const seen = new Set<number>();
        while (running) {
          for (const p of [pid, ...descendants(pid)]) {
            let text = '';
            try {
              text = `${readFileSync(`/proc/${p}/environ`, 'latin1')}\n${readFileSync(`/proc/${p}/cmdline`, 'latin1')}`;
            } catch {
              continue;
            }
            if (!seen.has(p)) read += 1;
            seen.add(p);
            for (const s of secrets()) if (s !== '' && text.includes(s)) found.add(s);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
    },
    result: async () => {
      await done;
      return { read, found: [...found] };
    },
  };
}

/** Every file under `dir` holding one of `secrets` (its path). */
async function filesHolding(dir: string, secrets: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) {
        const text = await readFile(path, 'latin1').catch(() => '');
        if (secrets.some((s) => s !== '' && text.includes(s))) out.push(path);
      }
    }
  };
  await walk(dir);
  return out;
}

type Mode = { readonly runner: 'root' | 'sudo'; readonly credentials: 'token' | 'app' };

interface Attacked {
  readonly epic: number;
  readonly jobs: Record<string, JobRun>;
  readonly watched: Record<string, { read: number; found: string[] }>;
  readonly publishWatched: Record<string, { read: number; found: string[] }>;
  readonly secrets: () => string[];
}

async function attack(mode: Mode): Promise<Attacked> {
  w = await startWorld({
    config: (dumps) =>
      [
        'executors:',
        '  - id: splitter',
        '    harness: command',
        `    command: ${JSON.stringify(['node', SPLITTER, dumps, join(dumps, '..')])}`,
        'gates: ["node check.mjs"]',
        'fixRounds: 0',
        '',
      ].join('\n'),
  });
  const epic = await startEpic(w, planBody([{ id: 'nest' }, { id: 'cart' }]));
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
  const jobs: Record<string, JobRun> = {};
  const watched: Attacked['watched'] = {};
  const publishWatched: Attacked['publishWatched'] = {};
  for (const story of ['nest', 'cart']) {
    const base = storyInputs(w, epic, story);
    const { 'github-token': _t, ...rest } = base;
    const inputs =
      key === undefined
        ? base
        : { ...rest, 'app-id': String(APP_ID), 'app-private-key': key.pkcs1 };
    const work = watch(secrets);
    const publish = watch(secrets);
    const workspace = await checkout(w, story);
    if (runner !== undefined) await run('chown', ['-R', `${runner.uid}:${runner.gid}`, workspace]);
    jobs[story] = await runJob(w, own, {
      name: story,
      workspace,
      inputs,
      runId: dispatchOf(w, epic, story).runId,
      env: { HOME: workspace, ACTIONS_RUNTIME_TOKEN: RUNTIME_TOKEN },
      onSpawn: work.onSpawn,
      onPublishSpawn: publish.onSpawn,
      ...(runner === undefined ? {} : { asUser: runner }),
    });
    watched[story] = await work.result();
    publishWatched[story] = await publish.result();
  }
  return { epic, jobs, watched, publishWatched, secrets };
}

async function expectHeld(a: Attacked): Promise<void> {
  const { epic, jobs } = a;
  const log = readFileSync(join(w.dumps, 'splitter-cart.log'), 'utf8');
  const nestLog = readFileSync(join(w.dumps, 'splitter-nest.log'), 'utf8');
  // It really tried.
  expect(nestLog).toContain('nest a repository with a filter: done');
  expect(log).toMatch(/plant a result in .*: /);
  // The agent never saw the runtime token that would upload an artifact.
  expect(log).toContain('runtime token: absent');
  expect(log).toContain('results url: absent');

  // No write credential in any process of the work jobs, nor in their folders; the publish
  // job's own process holds one (the search can find what it looks for).
  for (const story of ['nest', 'cart']) {
    expect(a.watched[story]?.read).toBeGreaterThan(3);
    expect({ story, found: a.watched[story]?.found }).toEqual({ story, found: [] });
    expect(a.publishWatched[story]?.found.length).toBeGreaterThan(0);
    expect(await filesHolding(join(w.dir, 'jobs', story), a.secrets())).toEqual([]);
  }
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
  expect(jobs['nest']?.outputs['status']).toBe('done');
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

  // The other merges as epicflow's work job handed it over, not as the agent's forgery.
  expect(jobs['cart']?.outputs['status']).toBe('done');
  const cart = (await store.read('cart'))?.record;
  expect(cart).toMatchObject({ status: 'done', executors: ['splitter'] });
  expect(JSON.stringify(cart)).not.toContain('FORGED');
  expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toBe(
    'export const story = "cart";\n',
  );
  const handed = JSON.parse(
    await readFile(join(w.dir, 'jobs', 'cart-publish', 'artifact', 'result.json'), 'utf8'),
  ) as { storyCommit: string; record: Record<string, unknown> };
  expect(handed.record['forged']).toBeUndefined();
  expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/cart`)).toBe(handed.storyCommit);
}

describe('a story in a work job and a publish job, attacked', () => {
  it('as root with the job token: no write credential in the work job, only checked commits merge', async () => {
    await expectHeld(await attack({ runner: 'root', credentials: 'token' }));
  }, 600_000);

  it("on a runner with passwordless sudo with the App's key: the same", async () => {
    const a = await attack({ runner: 'sudo', credentials: 'app' });
    await expectHeld(a);
    // The publish job minted the App's tokens; the work job had none to mint with.
    expect(w.gh.state.installationTokens().length).toBeGreaterThan(0);
    expect(a.jobs['cart']?.work?.stdout).not.toContain('::add-mask::-----');
  }, 600_000);
});

describe('the publish job refuses a result it cannot trust, on the story', () => {
  /** An epic whose story `cart` was dispatched, and its publish job's inputs. */
  async function dispatched(): Promise<{ epic: number; inputs: Record<string, string> }> {
    w = await startWorld();
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    return { epic, inputs: { ...storyInputs(w, epic, 'cart'), phase: 'publish' } };
  }

  async function publishWith(
    epic: number,
    inputs: Record<string, string>,
    artifact: (dir: string) => Promise<void>,
    env: Record<string, string> = {},
  ): Promise<JobRun> {
    const dir = join(w.dir, 'artifact');
    await mkdir(dir, { recursive: true });
    await artifact(dir);
    const workspace = join(w.dir, 'empty');
    await mkdir(workspace, { recursive: true });
    return runStep(w, bundle, {
      name: 'cart-publish',
      workspace,
      inputs: { ...inputs, result: dir },
      runId: dispatchOf(w, epic, 'cart').runId,
      env,
    });
  }

  async function expectNothingPushed(epic: number): Promise<void> {
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/cart`)).toBeUndefined();
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toBeUndefined();
  }

  it('a malformed result record: the field is named', async () => {
    const { epic, inputs } = await dispatched();
    const job = await publishWith(epic, inputs, async (dir) => {
      await writeFile(
        join(dir, 'result.json'),
        JSON.stringify({ version: 1, epic: String(epic), story: 'cart', attempt: 'one' }),
      );
    });
    expect(job.code).not.toBe(0);
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'failed' });
    expect((await store.read('cart'))?.record.reason).toMatch(/not a version 1 result: attempt/);
    await expectNothingPushed(epic);
  }, 120_000);

  it('two publish jobs of one result racing: the story is merged once, both say so, nothing half-pushed; a re-run after them is refused as stale', async () => {
    const { epic } = await dispatched();
    const { runId } = dispatchOf(w, epic, 'cart');
    const work = await runStep(w, bundle, {
      name: 'cart',
      workspace: await checkout(w, 'cart'),
      inputs: { ...storyInputs(w, epic, 'cart'), phase: 'work' },
      runId,
    });
    expect(work.outputs['status']).toBe('done');
    const result = work.outputs['result'] ?? '';
    const publish = async (name: string): Promise<JobRun> => {
      const workspace = join(w.dir, name);
      await mkdir(workspace, { recursive: true });
      return runStep(w, bundle, {
        name,
        workspace,
        inputs: { ...storyInputs(w, epic, 'cart'), phase: 'publish', result },
        runId,
      });
    };
    const [a, b] = await Promise.all([publish('publish-a'), publish('publish-b')]);
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    const merges = (
      await run(
        'git',
        [
          'log',
          '--first-parent',
          '--merges',
          '--format=%(trailers:key=Epicflow-Story,valueonly,separator=)',
          head ?? '',
        ],
        { cwd: w.gh.state.repoDir(OWNER, REPO) },
      )
    ).stdout
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(merges).toEqual(['cart']);
    // One merged it; the other found it merged (the same merge recorded, nothing pushed),
    // or, starting after the record was written, was refused as stale, or, merging in the
    // same second on the same head, made the very same merge commit, so its push changed nothing.
    const said = [a, b].map((job) =>
      job.code === 0 && job.outputs['merge-sha'] === head
        ? /already merged into epic\/\d+ \([0-9a-f]{12}\): nothing to push/.test(job.stdout)
          ? 'found it merged'
          : 'merged'
        : /this job is stale|is done/.test(job.summary)
          ? 'stale'
          : `unexpected: ${job.code} ${job.summary}`,
    );
    expect([
      ['merged', 'stale'],
      ['found it merged', 'merged'],
      ['merged', 'merged'],
    ]).toContainEqual(said.sort());
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'done', mergeCommit: head });

    // A re-run of a publish job after the story was published: refused as stale, nothing moves.
    const again = await publish('publish-again');
    expect(again.code).not.toBe(0);
    expect(again.summary).toMatch(/story cart of epic #\d+ is (done|at attempt)/);
    expect(await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(head);
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'done', mergeCommit: head });
  }, 300_000);

  it('a story dispatched to a workflow of one job: refused, saying what to update', async () => {
    const { epic } = await dispatched();
    const job = await runStep(w, bundle, {
      name: 'cart',
      workspace: await checkout(w, 'cart'),
      inputs: storyInputs(w, epic, 'cart'),
      runId: dispatchOf(w, epic, 'cart').runId,
    });
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain('runs it in one job, with the write credential beside the agent');
    expect(job.summary).toContain('.github/workflows/epicflow-story.yml');
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({ status: 'failed' });
    expect((await store.read('cart'))?.record.reason).toContain('epicflow init --force');
    await expectNothingPushed(epic);
    // The agent never ran.
    expect(existsSync(join(w.dumps, 'cart.json'))).toBe(false);
  }, 120_000);

  it('an event other than a dispatch (a pull request) never reaches the write credential', async () => {
    const { epic, inputs } = await dispatched();
    const job = await publishWith(epic, inputs, async () => {}, {
      GITHUB_EVENT_NAME: 'pull_request',
    });
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain(
      'the publish job runs only for workflow_dispatch, not pull_request',
    );
    await expectNothingPushed(epic);
  }, 120_000);
});
