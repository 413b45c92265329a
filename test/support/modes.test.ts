/**
 * Modes (test/support/modes.js): a test file that needs what the machine lacks is not run,
 * the run says once at the end which modes did not run, why, and what installs them, and
 * with CI=true that is a failure. Through jest run in a child process on fixture files: on
 * a PATH without sudo, crontab, at, pytest and go, and as a plain user (made here, so that part needs root).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { plainUser } from '../action/support/runner-users.js';
import { copyJest, fixtureConfig, runJest } from './jest-child.js';
import { modesOfNotRunTitle, notRunTitle } from './modes.js';
import { describeNeeding } from './needs.js';

const run = promisify(execFile);
const BUDGETS = { projects: { fixtures: 60 }, referenceMs: 1e9 };
const SYSTEM_PATH = `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;

/** Two fixture files: one that needs `modes`, one that needs nothing. */
async function fixtures(dir: string, modes: string): Promise<void> {
  await writeFile(
    join(dir, 'needy.test.cjs'),
    `/**\n * Needs what the machine may lack.\n *\n * @needs ${modes}\n */\ntest('runs', () => expect(1).toBe(1));\n`,
  );
  await writeFile(join(dir, 'plain.test.cjs'), "test('runs', () => expect(1).toBe(1));\n");
}

/** The environment of the child: the parent's, without CI unless asked for. */
function env(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { CI: _ci, ...rest } = process.env;
  return { ...rest, ...extra };
}

describe('a machine without sudo, cron, at, pytest and go (a PATH without them)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'epicflow-modes-'));
    await fixtures(dir, 'cron at pytest go');
    // A PATH with node and git only, and apt-get (never run: only looked for).
    const bin = join(dir, 'bin');
    await mkdir(bin);
    await symlink(process.execPath, join(bin, 'node'));
    const git = (await run('sh', ['-c', 'command -v git'])).stdout.trim();
    await symlink(git, join(bin, 'git'));
    await writeFile(join(bin, 'apt-get'), '#!/bin/sh\nexit 1\n');
    await chmod(join(bin, 'apt-get'), 0o755);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const path = () => join(dir, 'bin');
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';

  it('runs the rest, and says once which modes did not run and the one command that installs them', async () => {
    const r = await runJest(
      dir,
      fixtureConfig(dir, { fixtures: ['*.test.cjs'] }, BUDGETS),
      env({ PATH: path() }),
    );
    expect(r.output).toContain('Tests:       1 passed, 1 total');
    expect(r.output.split('Not run:').length).toBe(2);
    expect(r.output).toContain(
      [
        'Not run: modes this machine lacks, and the tests that need them (docs/testing.md, "Modes"):',
        '  cron: crontab is not installed (package cron) — needy.test.cjs',
        '  at: at is not installed (package at) — needy.test.cjs',
        '  pytest: python3 -m pytest does not work (package python3-pytest) — needy.test.cjs',
        '  go: go is not installed (package golang-go) — needy.test.cjs',
        `  to install what is missing: ${sudo}apt-get install -y cron at python3-pytest golang-go`,
      ].join('\n'),
    );
    expect(r.output).not.toContain('CI=true');
    expect(r.code).toBe(0);
  });

  it('with CI=true, fails the run with the same list', async () => {
    const r = await runJest(
      dir,
      fixtureConfig(dir, { fixtures: ['*.test.cjs'] }, BUDGETS),
      env({ PATH: path(), CI: 'true' }),
    );
    expect(r.output).toContain('Tests:       1 passed, 1 total');
    expect(r.output).toContain(
      [
        '  cron: crontab is not installed (package cron) — needy.test.cjs',
        '  at: at is not installed (package at) — needy.test.cjs',
        '  pytest: python3 -m pytest does not work (package python3-pytest) — needy.test.cjs',
        '  go: go is not installed (package golang-go) — needy.test.cjs',
        `  to install what is missing: ${sudo}apt-get install -y cron at python3-pytest golang-go`,
        'CI=true: in CI every test must run, so a missing mode fails the run.',
      ].join('\n'),
    );
    expect(r.code).toBe(1);
  });
});

describeNeeding(['root'], 'as a plain user (no root)', () => {
  let dir: string;
  let user: { uid: number; gid: number };
  beforeAll(async () => {
    user = await plainUser('epicflow-test-plain');
    dir = await mkdtemp(join(tmpdir(), 'epicflow-modes-user-'));
    await fixtures(dir, 'root');
    // The user runs jest from its own folder: the checkout may be closed to it.
    await copyJest(dir);
    await run('chown', ['-R', `${user.uid}:${user.gid}`, dir]);
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const config = () => fixtureConfig(dir, { fixtures: ['*.test.cjs'] }, BUDGETS, true);
  const userEnv = (extra: NodeJS.ProcessEnv) => ({ PATH: SYSTEM_PATH, HOME: dir, ...extra });

  it('passes, naming the mode that did not run and why', async () => {
    const r = await runJest(dir, config(), userEnv({}), user);
    expect(r.output).toContain('Tests:       1 passed, 1 total');
    expect(r.output).toContain(`  root: not root (uid ${user.uid}) — needy.test.cjs`);
    expect(r.code).toBe(0);
  });

  it('with CI=true, fails on the file that needs root', async () => {
    const r = await runJest(dir, config(), userEnv({ CI: 'true' }), user);
    expect(r.output).toContain(
      [
        `  root: not root (uid ${user.uid}) — needy.test.cjs`,
        'CI=true: in CI every test must run, so a missing mode fails the run.',
      ].join('\n'),
    );
    expect(r.code).toBe(1);
  });
});

describe('a part of a file that needs a mode', () => {
  it('stands in as a todo whose title the modes reporter reads back', () => {
    const missing = new Map([['cron', 'crontab is not installed (package cron)']] as const);
    expect(notRunTitle(['root', 'cron'], missing)).toBe(
      'not run, needs root cron: crontab is not installed (package cron)',
    );
    expect(modesOfNotRunTitle(notRunTitle(['root', 'cron'], missing))).toEqual(['root', 'cron']);
    expect(modesOfNotRunTitle('a todo of another kind')).toBeUndefined();
  });
});
