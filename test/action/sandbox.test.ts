/**
 * A story job on an unprivileged runner with passwordless sudo (GitHub-hosted runners), with
 * the kernel sandbox on: the agent runs as the agent user inside bubblewrap, and what it
 * could reach is written into the one file its story owns, which is merged. It sees no
 * process of the host (so no environment holding the job's token), no `.git` of the job's
 * checkout, and has no new privileges; the story merges as any other.
 *
 * @needs root sudo sandbox
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sudoer } from './support/runner-users.js';
import {
  buildBundle,
  checkout,
  dispatchOf,
  OWNER,
  planBody,
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

describe('a story job in the kernel sandbox', () => {
  it('on a runner with passwordless sudo: the agent sees no host process, token or .git, and the story merges', async () => {
    w = await startWorld({
      config: () => {
        // The token is put together at run time from two halves (sudo's SUDO_COMMAND holds
        // the command's text; no variable holds the whole token).
        const probe = [
          'mkdir -p src/cart; {',
          'id -un;',
          "ls /proc | grep -c '^[0-9]';",
          `if [ -e "${'$'}{WS}/.git" ]; then echo sees-git; else echo no-git; fi;`,
          'grep NoNewPrivs /proc/self/status;',
          'if cat /proc/[0-9]*/environ 2>/dev/null | grep -q "$TA$TB"; then echo sees-token; else echo no-token; fi;',
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
          'gates: ["true"]',
          '',
        ].join('\n');
      },
    });
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    const workspace = await checkout(w, 'cart');
    const bundle = await buildBundle(join(w.dir, 'bundle'));
    const runner = await sudoer('epicflow-test-sudoer');
    await run('chown', ['-R', `${runner.uid}:${runner.gid}`, w.dir]);
    await chmod(w.dir, 0o755);
    const job = await runJob(w, bundle, {
      name: 'cart',
      workspace,
      inputs: { ...storyInputs(w, epic, 'cart'), sandbox: 'true' },
      runId: dispatchOf(w, epic, 'cart').runId,
      env: {
        HOME: workspace,
        EPICFLOW_TEST_WORKSPACE: workspace,
        EPICFLOW_TEST_TOKEN_A: w.bot.token.slice(0, 8),
        EPICFLOW_TEST_TOKEN_B: w.bot.token.slice(8),
      },
      asUser: runner,
    });
    expect(job.stdout).toContain('inside the kernel sandbox (bubblewrap)');
    expect({ code: job.code, status: job.outputs['status'] }).toEqual({ code: 0, status: 'done' });
    const probe = await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/probe.txt');
    const [runAs, processes, ...rest] = (probe ?? '').trim().split('\n');
    expect(runAs).toMatch(/^epicflow-agent(-\d+)?$/);
    expect(Number(processes)).toBeLessThan(6);
    expect(rest).toEqual(['no-git', 'NoNewPrivs:\t1', 'no-token']);
  }, 540_000);
});
