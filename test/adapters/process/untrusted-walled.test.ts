/**
 * Steps of an agent user in the kernel sandbox, where epicflow lists no processes after
 * them: the kernel ends each step's PID namespace with it, and a step killed for its
 * timeout is awaited until its namespace has ended. A hostile step leaves a process behind
 * (its own session, its environment emptied) and its user's next step must run whole —
 * as root and as a user with passwordless sudo (a GitHub-hosted runner), where the kill
 * itself goes through `sudo`. Every folder is the test's own.
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

/** The child's four steps, run as `as` (root when none). */
async function fourSteps(
  base: string,
  as?: { uid: number; gid: number },
): Promise<Record<string, Step>> {
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
  return (JSON.parse(out) as { results: Record<string, Step> }).results;
}

function expectWhole(results: Record<string, Step>): void {
  expect(results['ended']).toEqual({ exitCode: 0, timedOut: false, stdout: 'started', left: [] });
  expect(results['killed']).toMatchObject({ timedOut: true, left: [] });
  // Neither what the step before left, nor the kill that ended it, reaches the next one.
  for (const next of ['afterEnded', 'afterKilled']) {
    expect(results[next]).toEqual({ exitCode: 0, timedOut: false, stdout: 'alive', left: [] });
  }
}

describe('steps of an agent user in the kernel sandbox', () => {
  it('as root: nothing a step left runs when it returns, ended or killed, and the next step runs whole', async () => {
    expectWhole(await fourSteps('epicflow-walled-r'));
  });

  it('with passwordless sudo: the same, the kill sent through sudo done before the next step', async () => {
    const user = await sudoer('epicflow-test-walled-sudoer');
    expectWhole(await fourSteps('epicflow-walled-s', user));
  });
});
