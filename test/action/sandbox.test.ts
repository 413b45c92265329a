/**
 * A story job in the kernel sandbox on an unprivileged runner — with passwordless sudo
 * (GitHub-hosted runners) and without: the agent runs as the runner's own user inside
 * bubblewrap, no agent user, hand-over or `sudo` between them, and what it could reach is
 * written into the one file its story owns, which is merged. The same uid as the job's
 * process, it sees no process of the host (so no environment holding the job's token), no
 * `.git` of the job's checkout, not the runner's file commands (`GITHUB_OUTPUT`), and has no
 * new privileges (no `sudo`); the story merges as any other.
 *
 * @needs root sudo sandbox
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { plainUser, sudoer, type RunnerUser } from './support/runner-users.js';
import {
  buildBundle,
  checkout,
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
} from './support/world.js';

const run = promisify(execFile);

let w: ActionWorld;
afterEach(async () => {
  await w.close();
});

/** What the agent of one story job in the sandbox could reach, run by `runner`. */
async function probeAs(runner: RunnerUser): Promise<{ lines: string[]; summary: string }> {
  w = await startWorld({
    config: () => {
      // The work job's token is put together at run time from two halves (no variable the
      // agent is given holds the whole token).
      const probe = [
        'mkdir -p src/cart; {',
        'id -un;',
        "ls /proc | grep -c '^[0-9]';",
        `if [ -e "${'$'}{WS}/.git" ]; then echo sees-git; else echo no-git; fi;`,
        'grep NoNewPrivs /proc/self/status;',
        'if cat /proc/[0-9]*/environ 2>/dev/null | grep -q "$TA$TB"; then echo sees-token; else echo no-token; fi;',
        'if [ -e "$OUT" ]; then echo sees-output; else echo no-output; fi;',
        'if sudo -n true 2>/dev/null; then echo sudo; else echo no-sudo; fi;',
        '} > src/cart/probe.txt',
      ].join(' ');
      return [
        'executors:',
        '  - id: prober',
        '    harness: command',
        `    command: ${JSON.stringify(['sh', '-c', probe])}`,
        '    env:',
        '      WS: "${EPICFLOW_TEST_WORKSPACE}"',
        '      TA: "${EPICFLOW_TEST_TOKEN_A}"',
        '      TB: "${EPICFLOW_TEST_TOKEN_B}"',
        '      OUT: "${GITHUB_OUTPUT}"',
        'gates: ["true"]',
        '',
      ].join('\n');
    },
  });
  const epic = await startEpic(w, planBody([{ id: 'cart' }]));
  const workspace = await checkout(w, 'cart');
  const bundle = await buildBundle(join(w.dir, 'bundle'));
  await run('chown', ['-R', `${runner.uid}:${runner.gid}`, w.dir]);
  await chmod(w.dir, 0o755);
  const token = readToken(w);
  const job = await runJob(w, bundle, {
    name: 'cart',
    workspace,
    inputs: { ...storyInputs(w, epic, 'cart'), sandbox: 'true' },
    runId: dispatchOf(w, epic, 'cart').runId,
    env: {
      HOME: workspace,
      EPICFLOW_TEST_WORKSPACE: workspace,
      EPICFLOW_TEST_TOKEN_A: token.slice(0, 8),
      EPICFLOW_TEST_TOKEN_B: token.slice(8),
    },
    asUser: runner,
  });
  expect(job.stdout).toContain(
    "epicflow: untrusted code runs as epicflow's own user inside the kernel sandbox (bubblewrap)",
  );
  expect({ code: job.code, status: job.outputs['status'] }).toEqual({ code: 0, status: 'done' });
  const probe = await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/probe.txt');
  return { lines: (probe ?? '').trim().split('\n'), summary: job.summary };
}

describe('a story job in the kernel sandbox, as the runner itself', () => {
  it('on a runner with passwordless sudo: the agent sees no host process, token, .git or file command, cannot sudo, and the story merges', async () => {
    const runner = await sudoer('epicflow-test-sudoer');
    const { lines } = await probeAs(runner);
    const [runAs, processes, ...rest] = lines;
    expect(runAs).toBe(runner.name);
    expect(Number(processes)).toBeLessThan(6);
    expect(rest).toEqual(['no-git', 'NoNewPrivs:\t1', 'no-token', 'no-output', 'no-sudo']);
  }, 540_000);

  it('on a runner with neither root nor sudo: the same, with no opt-in and no warning', async () => {
    const runner = await plainUser('epicflow-test-plain');
    const { lines, summary } = await probeAs(runner);
    expect(lines[0]).toBe(runner.name);
    expect(lines.slice(2)).toEqual([
      'no-git',
      'NoNewPrivs:\t1',
      'no-token',
      'no-output',
      'no-sudo',
    ]);
    expect(summary).toContain(
      "| untrusted code | ran as epicflow's own user inside the kernel sandbox (bubblewrap)",
    );
    expect(summary).not.toContain('⚠️');
  }, 540_000);
});
