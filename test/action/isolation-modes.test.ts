/**
 * A story job in each of the three ways runners run it — as root, as an unprivileged
 * runner with passwordless sudo (GitHub-hosted runners), and as one with neither (then
 * only with `allow-unisolated-agent`) — completes and merges, with an agent that goes
 * after epicflow's own git and file writes (support/intruder.mjs): it swaps the tree's
 * `.git` for one whose config runs a filter, plants links where the next prompt is
 * written, leaves a crontab and an at job. None of it reaches epicflow: no filter runs,
 * nothing is written through a link, nothing it scheduled is left. (An agent user that may
 * use sudo is refused before any step: test/adapters/process/agent-user.test.ts.)
 *
 * @needs root sudo cron at
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentScript } from './support/agents.js';
import { plainUser, sudoer, type RunnerUser } from './support/runner-users.js';
import {
  buildBundle,
  checkout,
  dispatchOf,
  OWNER,
  planBody,
  REPO,
  runJob,
  startEpic,
  startJobProcessesFromNode,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';

const run = promisify(execFile);

// Each mode's end-to-end run starts the job's processes as a runner does, from the job's own
// Node process: the sudo and agent-user starts are the ones this file is about.
startJobProcessesFromNode();

const INTRUDER = agentScript('intruder.mjs');

let w: ActionWorld;
afterEach(async () => {
  await w.close();
});

type Mode = 'root' | 'sudo' | 'unisolated';

interface Attack {
  readonly job: JobRun;
  readonly victim: string;
  readonly log: string;
  readonly agents: string[];
}

/** One story job of the intruder, run the way `mode` says. */
async function attack(mode: Mode): Promise<Attack> {
  let victim = '';
  w = await startWorld({
    config: (dumps) => {
      victim = join(dumps, '..', 'victim.txt');
      return [
        'executors:',
        '  - id: intruder',
        '    harness: command',
        `    command: ${JSON.stringify(['node', INTRUDER, dumps, victim])}`,
        'gates: ["sh check.sh"]',
        'fixRounds: 1',
        '',
      ].join('\n');
    },
  });
  await writeFile(victim, 'victim\n');
  await chmod(victim, 0o644);
  const epic = await startEpic(w, planBody([{ id: 'cart' }]));
  const workspace = await checkout(w, 'cart');
  const bundle = await buildBundle(join(w.dir, 'bundle'));
  let runner: RunnerUser | undefined;
  if (mode !== 'root') {
    runner =
      mode === 'sudo'
        ? await sudoer('epicflow-test-sudoer')
        : await plainUser('epicflow-test-runner');
    // The runner's files are its own: the bundle it runs, its workspace, its temp folder.
    await run('chown', ['-R', `${runner.uid}:${runner.gid}`, w.dir]);
    await chmod(w.dir, 0o755);
    await chmod(w.dumps, 0o1777);
  }
  const job = await runJob(w, bundle, {
    name: 'cart',
    workspace,
    inputs: {
      ...storyInputs(w, epic, 'cart'),
      ...(mode === 'unisolated' ? { 'allow-unisolated-agent': 'true' } : {}),
    },
    runId: dispatchOf(w, epic, 'cart').runId,
    env: { HOME: workspace },
    ...(runner === undefined ? {} : { asUser: runner }),
  });
  const logFile = join(w.dumps, 'intruder-cart.log');
  const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
  const agents = [...new Set([...log.matchAll(/^round \d as (\S+)$/gm)].map((m) => m[1] ?? ''))];
  return { job, victim, log, agents };
}

/** What the agent's attack on epicflow's own git and files must not have achieved. */
async function expectRepelled(a: Attack): Promise<void> {
  // It really tried, in two rounds.
  expect(a.log).toMatch(/^round 1 as /m);
  expect(a.log).toMatch(/^round 2 as /m);
  expect(a.log).toMatch(/^plant a link at the round 2 prompt: done$/m);
  // No filter of its config ran: epicflow's git never used the `.git` it planted.
  expect(existsSync(join(w.dumps, 'filter-ran'))).toBe(false);
  expect(existsSync(join(w.dumps, 'filter-loot'))).toBe(false);
  // Nothing was written through the links it planted.
  expect(readFileSync(a.victim, 'utf8')).toBe('victim\n');
  // The story was judged and merged as any other.
  expect({ code: a.job.code, status: a.job.outputs['status'] }).toEqual({
    code: 0,
    status: 'done',
  });
  expect(await w.gh.state.file(OWNER, REPO, 'epic/1', 'src/cart/index.js')).toBe(
    'export const story = "cart";\n',
  );
  expect(await w.gh.state.file(OWNER, REPO, 'epic/1', '.gitattributes')).toBeUndefined();
}

/** Nothing the agent users scheduled is left for later. */
async function expectNothingScheduled(agents: readonly string[]): Promise<void> {
  expect(agents.length).toBeGreaterThan(0);
  for (const user of agents) {
    expect(existsSync(`/var/spool/cron/crontabs/${user}`)).toBe(false);
    const uid = Number((await run('id', ['-u', user])).stdout.trim());
    const owned = await run('find', ['/var/spool/cron/atjobs', '-user', String(uid)]);
    expect({ user, atJobs: owned.stdout.trim() }).toEqual({ user, atJobs: '' });
  }
}

describe('a story job, in each of the three ways a runner runs it', () => {
  it('as root: merges, and the agent reaches neither epicflow git nor its files', async () => {
    const a = await attack('root');
    await expectRepelled(a);
    for (const user of a.agents) expect(user).toMatch(/^epicflow-agent(-\d+)?$/);
    await expectNothingScheduled(a.agents);
  }, 540_000);

  it('as an unprivileged runner with passwordless sudo (GitHub-hosted): the same', async () => {
    const a = await attack('sudo');
    await expectRepelled(a);
    for (const user of a.agents) expect(user).toMatch(/^epicflow-agent(-\d+)?$/);
    await expectNothingScheduled(a.agents);
  }, 540_000);

  it('as a runner with neither, opted in to an unisolated agent: its git and files hold still', async () => {
    const a = await attack('unisolated');
    await expectRepelled(a);
    expect(a.agents).toEqual(['epicflow-test-runner']);
    // Only because the workflow opted in; the summary and a warning say what that means (the
    // refusal without the opt-in: trust-boundary.test.ts).
    expect(a.job.summary).toMatch(
      /\| untrusted code \| ⚠️ ran as epicflow's own user \(not isolated\): it could read this job's credentials \(allow-unisolated-agent\) \|/,
    );
    expect(a.job.stdout).toContain(
      '::warning title=epicflow%3A agent not isolated::the agent runs as the runner',
    );
  }, 540_000);
});
