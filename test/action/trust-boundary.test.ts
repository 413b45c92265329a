/**
 * The agent never reaches a credential: a runner where no separate user can be had for the
 * agent (no root, no passwordless sudo) refuses to start the story. A prompt-injected agent
 * (support/thief.mjs) that tries every route to a credential it knows — its own environment,
 * /proc/<pid>/environ and /proc/<ppid>/mem of every process, sudo, git's configuration, the
 * runner's files (a home with a .git-credentials and an .npmrc, the event file), a process
 * left behind to try again while the job pushes — runs in the story job of
 * work-publish.test.ts as root with the job token, beside its splitter: nothing secret lands
 * anywhere. With the App's private key the work job holds no key and no token at all: every
 * process of it is searched for one while it runs (work-publish.test.ts, sudo with the App's
 * key), and the agent's environment and the job's log and summary are searched for the key
 * and the tokens minted (app-token.test.ts).
 *
 * @needs root
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
  type JobRun,
} from './support/world.js';

const run = promisify(execFile);

let w: ActionWorld;
afterEach(async () => {
  await w.close();
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
