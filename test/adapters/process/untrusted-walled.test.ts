/**
 * Steps of an agent user in the kernel sandbox, where epicflow lists no processes after
 * them and keeps no pool: the kernel ends each step's PID namespace with it, a step killed
 * for its timeout is awaited until its namespace has ended, and steps side by side run as
 * the run's one user. A hostile step leaves a process behind (its own session, its
 * environment emptied) and the user's next step must run whole; a step killed beside
 * another must not take it along — as root and as a user with passwordless sudo (a
 * GitHub-hosted runner), where the kill itself goes through `sudo`. Every folder is the
 * test's own.
 *
 * @needs root sudo sandbox
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sudoer } from '../../action/support/runner-users.js';
import { bundledEntry } from '../../support/bundled-entry.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'support', 'walled-child.ts');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-walled-'));
  await chmod(dir, 0o755);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Step {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  left: number[];
}

interface Steps {
  uid: number;
  results: Record<string, Step>;
}

/** The child's steps, run as `as` (root when none). */
async function fourSteps(base: string, as?: { uid: number; gid: number }): Promise<Steps> {
  const folder = join(dir, base);
  await mkdir(folder, { mode: 0o755 });
  if (as !== undefined) await chown(folder, as.uid, as.gid);
  const entry = await bundledEntry(CHILD);
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [entry, base, folder],
      { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: folder }, ...as },
      (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`${String(error)}\n${stderr}`)),
    );
  });
  return JSON.parse(out) as Steps;
}

function expectWhole({ uid, results }: Steps): void {
  expect(results['ended']).toEqual({ exitCode: 0, timedOut: false, stdout: 'started', left: [] });
  expect(results['killed']).toMatchObject({ timedOut: true, left: [] });
  // Neither what the step before left, nor the kill that ended it, reaches the next one.
  for (const next of ['afterEnded', 'afterKilled']) {
    expect(results[next]).toEqual({ exitCode: 0, timedOut: false, stdout: 'alive', left: [] });
  }
  // Side by side, as the one user: the kill of one step reaches no other.
  expect(results['besideKilled']).toMatchObject({ timedOut: true });
  expect(results['beside']).toMatchObject({ exitCode: 0, timedOut: false, stdout: String(uid) });
}

describe('steps of an agent user in the kernel sandbox', () => {
  it('as root: nothing a step left runs when it returns, ended or killed; the next step, and one beside a killed one, run whole', async () => {
    expectWhole(await fourSteps('epicflow-walled-r'));
  });

  it('with passwordless sudo: the same, the kill sent through sudo reaching the killed step alone', async () => {
    const user = await sudoer('epicflow-test-walled-sudoer');
    expectWhole(await fourSteps('epicflow-walled-s', user));
  });
});
