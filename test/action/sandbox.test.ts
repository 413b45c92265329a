/**
 * A story job in the kernel sandbox on an unprivileged runner — with passwordless sudo
 * (GitHub-hosted runners) and without: the agent runs as the runner's own user inside
 * bubblewrap, no agent user, hand-over or `sudo` between them, and what it could reach is
 * written into the one file its story owns, which is merged. The same uid as the job's
 * process, it sees no process of the host (so no environment holding the job's token), no
 * `.git` of the job's checkout, not the runner's file commands (`GITHUB_OUTPUT`), and has no
 * new privileges (no `sudo`); the story merges as any other. A planning job's planner runs
 * the same way, and answers with what it could reach in its plan.
 *
 * @needs root sudo sandbox
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { plainUser, sudoer, type RunnerUser } from './support/runner-users.js';
import { parsePlan } from '../../src/core/plan/index.js';
import { labelEpic } from './support/epic.js';
import { PROSE } from './support/planning.js';
import {
  buildBundle,
  checkout,
  dispatched,
  dispatchOf,
  OWNER,
  planBody,
  readToken,
  REPO,
  runJob,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';

const run = promisify(execFile);

let w: ActionWorld;
afterEach(async () => {
  await w.close();
});

/**
 * What a step in the sandbox could reach, one result a word: its user, how many processes
 * it sees, the checkout's `.git`, its no-new-privileges flag, the work job's token in any
 * process's environment (put together from two halves at run time: no variable the step is
 * given holds the whole token), the runner's `GITHUB_OUTPUT`, `sudo`; and whether its own
 * git answers in its tree.
 */
const PROBE = [
  'id -un;',
  "ls /proc | grep -c '^[0-9]';",
  // Of the checkout's git folder, only its objects are there (a repository of the step's
  // own stands where its tree's `.git` leads), never its config with the job's credential.
  `if [ -e "${'$'}{WS}/.git/config" ]; then echo sees-git; else echo no-git; fi;`,
  "grep NoNewPrivs /proc/self/status | tr -d '\\t ';",
  'if cat /proc/[0-9]*/environ 2>/dev/null | grep -q "$TA$TB"; then echo sees-token; else echo no-token; fi;',
  'if [ -e "$OUT" ]; then echo sees-output; else echo no-output; fi;',
  'if [ -e "$RT/_runner_file_commands/set_env" ]; then echo sees-temp; else echo no-temp; fi;',
  'if sudo -n true 2>/dev/null; then echo sudo; else echo no-sudo; fi;',
  'if git rev-parse --verify -q HEAD >/dev/null; then echo git-works; else echo no-git-works; fi;',
].join(' ');

/** The probe's words after the user and the count of processes: nothing reached. */
const NOTHING_REACHED = [
  'no-git',
  'NoNewPrivs:1',
  'no-token',
  'no-output',
  'no-temp',
  'no-sudo',
  'git-works',
];

/** What the probe needs from the job's environment. */
const PROBE_ENV = [
  '    env:',
  '      WS: "${EPICFLOW_TEST_WORKSPACE}"',
  '      TA: "${EPICFLOW_TEST_TOKEN_A}"',
  '      TB: "${EPICFLOW_TEST_TOKEN_B}"',
  '      OUT: "${GITHUB_OUTPUT}"',
  '      RT: "${RUNNER_TEMP}"',
];

/** The world's folders made the runner's (its bundle, workspaces, temp folders), and the job's run as it. */
async function runAs(
  runner: RunnerUser,
  epic: number,
  story: string,
  /** The bundle already built in the world's folder, if any. */
  built?: string,
): Promise<JobRun> {
  const workspace = await checkout(w, story);
  const bundle = built ?? (await buildBundle(join(w.dir, 'bundle')));
  // The runner's file commands in its temp folder, and that folder's parent on PATH (as a
  // tool folder a workflow added): the step may read the folder, never the file commands.
  const jobFolder = join(w.dir, 'jobs', story);
  await mkdir(join(jobFolder, 'temp', '_runner_file_commands'), { recursive: true });
  await writeFile(join(jobFolder, 'temp', '_runner_file_commands', 'set_env'), 'A=1\n');
  await run('chown', ['-R', `${runner.uid}:${runner.gid}`, w.dir]);
  await chmod(w.dir, 0o755);
  const token = readToken(w);
  const job = await runJob(w, bundle, {
    name: story,
    workspace,
    inputs: { ...storyInputs(w, epic, story), sandbox: 'true' },
    runId: dispatchOf(w, epic, story).runId,
    env: {
      HOME: workspace,
      PATH: `${jobFolder}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
      EPICFLOW_TEST_WORKSPACE: workspace,
      EPICFLOW_TEST_TOKEN_A: token.slice(0, 8),
      EPICFLOW_TEST_TOKEN_B: token.slice(8),
    },
    asUser: runner,
  });
  expect(job.stdout).toContain(
    "epicflow: untrusted code runs as epicflow's own user inside the kernel sandbox (bubblewrap)",
  );
  return job;
}

/** What the agent of one story job in the sandbox could reach, run by `runner`. */
async function probeAs(runner: RunnerUser): Promise<{ lines: string[]; summary: string }> {
  w = await startWorld({
    config: () =>
      [
        'executors:',
        '  - id: prober',
        '    harness: command',
        `    command: ${JSON.stringify(['sh', '-c', `mkdir -p src/cart; { ${PROBE} } > src/cart/probe.txt`])}`,
        ...PROBE_ENV,
        'gates: ["true"]',
        '',
      ].join('\n'),
  });
  const epic = await startEpic(w, planBody([{ id: 'cart' }]));
  const job = await runAs(runner, epic, 'cart');
  expect({ code: job.code, status: job.outputs['status'] }).toEqual({ code: 0, status: 'done' });
  const probe = await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/probe.txt');
  return { lines: (probe ?? '').trim().split('\n'), summary: job.summary };
}

describe('jobs in the kernel sandbox, as the runner itself', () => {
  it('on a runner with passwordless sudo: the agent sees no host process, token, .git or file command, cannot sudo, and the story merges', async () => {
    const runner = await sudoer('epicflow-test-sudoer');
    const { lines } = await probeAs(runner);
    const [runAs, processes, ...rest] = lines;
    expect(runAs).toBe(runner.name);
    expect(Number(processes)).toBeLessThan(6);
    expect(rest).toEqual(NOTHING_REACHED);
  }, 540_000);

  it('on a runner with neither root nor sudo: the same, with no opt-in and no warning', async () => {
    const runner = await plainUser('epicflow-test-plain');
    const { lines, summary } = await probeAs(runner);
    expect(lines[0]).toBe(runner.name);
    expect(lines.slice(2)).toEqual(NOTHING_REACHED);
    expect(summary).toContain(
      "| untrusted code | ran as epicflow's own user inside the kernel sandbox (bubblewrap)",
    );
    expect(summary).not.toContain('⚠️');
  }, 540_000);

  it('a planning job on a runner with passwordless sudo: the planner runs the same way, and its plan is proposed', async () => {
    // The planner answers with a plan whose one story's description is what it could reach.
    const plan = [
      `p=$( { ${PROBE} } | tr '\\n' ' ')`,
      'printf \'```epicflow\\nstories:\\n  - id: cart\\n    title: "Build the cart"\\n    description: "%s"\\n    owns: [src/cart]\\n    acceptance: ["src/cart exports story"]\\n```\\n\' "$p"',
    ].join('\n');
    w = await startWorld({
      config: () =>
        [
          'executors:',
          '  - id: coder',
          '    harness: command',
          '    command: [sh, -c, "true"]',
          '  - id: planner',
          '    harness: command',
          `    command: ${JSON.stringify(['sh', '-c', plan])}`,
          '    roles: [planner]',
          ...PROBE_ENV,
          'gates: ["true"]',
          '',
        ].join('\n'),
    });
    const bundle = await buildBundle(join(w.dir, 'bundle'));
    const { epic } = await labelEpic(w, bundle, 'Checkout', PROSE);
    expect(dispatched(w, epic)).toEqual(['_plan#1']);
    const runner = await sudoer('epicflow-test-sudoer');
    const job = await runAs(runner, epic, '_plan', bundle);
    expect({ code: job.code, status: job.outputs['status'] }).toMatchObject({ code: 0 });
    const parsed = parsePlan((await w.repo.getIssue(epic)).body);
    expect(parsed.ok).toBe(true);
    const seen = (parsed.ok ? (parsed.plan.stories[0]?.description ?? '') : '').trim().split(' ');
    expect(seen[0]).toBe(runner.name);
    // Its own processes only (the probe runs in a command substitution and a pipeline).
    expect(Number(seen[1])).toBeLessThan(10);
    expect(seen.slice(2)).toEqual(NOTHING_REACHED);
  }, 540_000);
});
