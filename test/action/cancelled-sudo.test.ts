/**
 * A story job cancelled on a runner like GitHub's hosted ones (an unprivileged user with
 * passwordless sudo, the agent a user of its own through sudo): the runner's SIGINT
 * reaches the job, which ends the coder it started through sudo, removes its folder and
 * fails the story for `/resume`, all before the runner's kill would come. The same as root,
 * with `/resume` after it, is test/action/killed-job.test.ts.
 *
 * @needs root sudo
 */
import { afterAll, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { sixStoryConfig } from './support/epic.js';
import { sudoer } from './support/runner-users.js';
import {
  buildBundle,
  checkout,
  dispatchOf,
  planBody,
  runJob,
  startEpic,
  startJobProcessesFromNode,
  startWorld,
  storyInputs,
  type ActionWorld,
} from './support/world.js';

const run = promisify(execFile);
// The job's processes are started as a runner starts them: from the job's own Node process.
startJobProcessesFromNode();

let w: ActionWorld;
afterAll(async () => w.close());

it('SIGINT during the coder turn: the coder (an agent user through sudo) and the job folder are gone, the story fails for /resume', async () => {
  w = await startWorld({ config: (dumps) => sixStoryConfig(dumps).replace(/^board:.*\n/m, '') });
  const epic = await startEpic(w, planBody([{ id: 'cancelled' }]));
  const workspace = await checkout(w, 'cancelled-1');
  const bundle = await buildBundle(join(w.dir, 'bundle'));
  const runner = await sudoer('epicflow-test-sudoer');
  // The job's temp folder, where it makes its own: empty again once the job is over.
  const temp = join(w.dir, 'jobs', 'cancelled-tmp');
  mkdirSync(temp, { recursive: true, mode: 0o711 });
  // The runner's files are its own: the bundle it runs, its workspace, its temp folders.
  await run('chown', ['-R', `${runner.uid}:${runner.gid}`, w.dir]);
  await chmod(w.dir, 0o755);
  await chmod(w.dumps, 0o1777);
  const started = join(w.dumps, 'cancelled-started');
  const job = await runJob(w, bundle, {
    name: 'cancelled-1',
    workspace,
    inputs: storyInputs(w, epic, 'cancelled'),
    runId: dispatchOf(w, epic, 'cancelled').runId,
    env: { HOME: workspace, TMPDIR: temp },
    asUser: runner,
    onSpawn: (child) => {
      void (async () => {
        // Bounded: the coder writes its file within seconds.
        for (let i = 0; i < 600 && !existsSync(started); i++) await sleep(50);
        child.kill('SIGINT');
      })();
    },
  });
  expect(job.work?.code).toBe(1);
  expect(job.work?.stdout).toContain('runs as the user epicflow-agent');
  expect(job.work?.stdout).toContain(
    'SIGINT: the step is cancelled: stopping, and handing over what is done',
  );
  expect(job.work?.stdout).toContain(
    'cancelled: failed: its job was cancelled; /resume continues it from what was committed',
  );
  expect(existsSync(`/proc/${Number(readFileSync(started, 'utf8'))}`)).toBe(false);
  expect(readdirSync(temp)).toEqual([]);
  expect(job.work?.outputs['status']).toBe('failed');
  expect(job.publish?.summary).toContain(
    'its job was cancelled; /resume continues it from what was committed',
  );
}, 300_000);
