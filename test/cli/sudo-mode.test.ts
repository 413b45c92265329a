/**
 * `epicflow run --agent-user` and `epicflow land --agent-user` started by an unprivileged
 * user with passwordless sudo, as on a developer's machine or a GitHub-hosted runner:
 * the agent, setup and gates run as the agent user, and epicflow, which is not root, can
 * still merge in the trees they ran in. A landing killed while its gates ran (the tree
 * still the agent user's) is made again by the next `epicflow land`.
 *
 * The command line is bundled into the test's own folder and run as a user the test makes
 * (the tests run as root; sudo must be installed, see docs/testing.md).
 *
 * @needs root sudo sandbox
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sudoer, type RunnerUser } from '../action/support/runner-users.js';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

let dir: string;
let cli: string;
let repo: string;
let dumps: string;
let user: RunnerUser;

interface Result {
  readonly code: number | null;
  readonly output: string;
}

/** `epicflow <args>` as the sudoer, in the repository; `onStart` gets the child. */
function epicflow(args: readonly string[], onStart?: (pid: number) => void): Promise<Result> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: repo,
      uid: user.uid,
      gid: user.gid,
      detached: true,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: join(dir, 'home'),
        NO_COLOR: '1',
        // What a developer's shell may hold: never the agent's.
        MY_SHELL_SECRET: 'sekret-in-the-shell',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    if (child.pid !== undefined) onStart?.(child.pid);
    child.on('close', (code) => done({ code, output }));
  });
}

/** git in the repository, as the sudoer (whose repository it is). */
function git(...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    uid: user.uid,
    gid: user.gid,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(dir, 'home') },
  }).trim();
}

async function waitFor(path: string): Promise<void> {
  for (let i = 0; i < 1200 && !existsSync(path); i++) await sleep(50);
  if (!existsSync(path)) throw new Error(`${path} never appeared`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-sudo-mode-'));
  await chmod(dir, 0o755);
  await run(process.execPath, [join(ROOT, 'scripts/build-action.mjs'), join(dir, 'cli'), '--cli'], {
    cwd: ROOT,
  });
  cli = join(dir, 'cli', 'cli.js');
  user = await sudoer('epicflow-test-sudoer');
  dumps = join(dir, 'dumps');
  await mkdir(dumps, { mode: 0o1777 });
  await chmod(dumps, 0o1777);
  await mkdir(join(dir, 'home'));
  repo = join(dir, 'repo');
  await mkdir(join(repo, 'src'), { recursive: true });
  // The agent writes who it is; the gate holds once on the land tree, telling the test.
  const coder = [
    'sh',
    '-c',
    'mkdir -p src; id -un > "src/$EPICFLOW_STORY.txt"; env > "$0/env-$EPICFLOW_STORY"',
    dumps,
  ];
  await writeFile(
    join(repo, 'gate.sh'),
    [
      `case "$PWD" in *_land*) if [ ! -e ${dumps}/land-gating ]; then`,
      `  echo $$ > ${dumps}/land-gating; sleep 60; fi;; esac`,
      'test "$(id -un)" != root',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(repo, 'epicflow.yml'),
    [
      'executors:',
      '  - id: bot',
      '    harness: command',
      `    command: ${JSON.stringify(coder)}`,
      'gates: ["sh gate.sh"]',
      '',
    ].join('\n'),
  );
  await writeFile(join(repo, 'README.md'), 'readme\n');
  await writeFile(
    join(dir, 'plan.md'),
    [
      '```epicflow',
      'stories:',
      '  - id: a',
      '    title: Story a',
      '    description: Write a.',
      '    owns: [src/a.txt]',
      '  - id: b',
      '    title: Story b',
      '    description: Write b.',
      '    owns: [src/b.txt]',
      '```',
      '',
    ].join('\n'),
  );
  // Everything is the sudoer's own, as a developer's checkout is theirs.
  await run('chown', [
    '-R',
    `${user.uid}:${user.gid}`,
    repo,
    join(dir, 'home'),
    join(dir, 'plan.md'),
  ]);
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Dev');
  git('config', 'user.email', 'dev@example.com');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  // What actions/checkout leaves in a checkout's config: the token, as a header.
  git('config', 'http.https://github.com/.extraheader', 'AUTHORIZATION: basic c2VrcmV0');
}, 360_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('as an unprivileged user with passwordless sudo', () => {
  it('runs an epic with --agent-user: the agent and gates run as the agent user, and every story merges', async () => {
    // Without the kernel sandbox: the coder and the gate report to the test through a folder
    // beside the repository, which the sandbox hides (test/adapters/process/sandbox.test.ts
    // attacks the sandbox itself, as this user's kind of runner runs it).
    const result = await epicflow([
      'run',
      join(dir, 'plan.md'),
      '--agent-user',
      'epicflow-agent',
      '--no-sandbox',
    ]);
    expect(result.output).not.toMatch(/Permission denied|EACCES|hint:/);
    expect(result.code).toBe(0);
    for (const id of ['a', 'b']) {
      expect(git('show', `epic/plan:src/${id}.txt`)).toMatch(/^epicflow-agent(-\d+)?$/);
      const env = readFileSync(join(dumps, `env-${id}`), 'utf8');
      expect(env).not.toContain('sekret-in-the-shell');
    }
    // The merges are epicflow's, made as the sudoer.
    expect(git('log', '-1', '--format=%an', 'epic/plan')).toBe('Dev');
  }, 360_000);

  it.each([
    ['as the developer (the default without root)', [], 'epicflow-test-sudoer'],
    ['as the agent user', ['--agent-user', 'epicflow-agent'], 'epicflow-agent'],
  ])(
    'runs an epic inside the kernel sandbox %s: the agent sees no process, secret or .git of the host',
    async (_mode, flags, who) => {
      const epic = who === 'epicflow-agent' ? 'walled-agent' : 'walled-self';
      const ids = [`${epic}-1`, `${epic}-2`];
      // The coder writes what it could reach into the one file its story owns.
      const probe = [
        'mkdir -p src; {',
        'id -un;',
        "ls /proc | grep -c '^[0-9]';",
        `if [ -e ${repo}/.git/config ]; then echo sees-git; else echo no-git; fi;`,
        'grep NoNewPrivs /proc/self/status;',
        // The pattern is put together at run time: sudo's SUDO_COMMAND holds this text as written.
        'if cat /proc/[0-9]*/environ 2>/dev/null | grep -q "sekret-in-the-$(echo shell)"; then echo sees-secret; else echo no-secret; fi;',
        // Its own git answers in its tree; the header the checkout keeps is not there.
        'git branch --show-current 2>&1;',
        'git config --get-regexp extraheader || echo no-header;',
        '} > "src/$EPICFLOW_STORY.txt"',
      ].join(' ');
      const config = join(dir, `${epic}.yml`);
      await writeFile(
        config,
        [
          'executors:',
          '  - id: bot',
          '    harness: command',
          `    command: ${JSON.stringify(['sh', '-c', probe])}`,
          'gates: ["sh gate.sh"]',
          '',
        ].join('\n'),
      );
      const plan = join(dir, `${epic}.md`);
      await writeFile(
        plan,
        [
          '```epicflow',
          'stories:',
          ...ids.flatMap((id) => [
            `  - id: ${id}`,
            `    title: Story ${id}`,
            '    description: Probe.',
            `    owns: [src/${id}.txt]`,
          ]),
          '```',
          '',
        ].join('\n'),
      );
      await run('chown', [`${user.uid}:${user.gid}`, config, plan]);
      const result = await epicflow(['run', plan, '--config', config, ...flags]);
      expect(result.output).not.toMatch(/Permission denied|EACCES|hint:|sandbox cannot run/);
      expect(result.code).toBe(0);
      for (const id of ids) {
        const [runAs, processes, ...rest] = git('show', `epic/${epic}:src/${id}.txt`).split('\n');
        expect(runAs).toMatch(new RegExp(`^${who}(-\\d+)?$`));
        // The sandbox's init, the shell and its pipeline: none of the host's.
        expect(Number(processes)).toBeLessThan(6);
        expect(rest).toEqual([
          'no-git',
          'NoNewPrivs:\t1',
          'no-secret',
          `story/${epic}/${id}`,
          'no-header',
        ]);
      }
    },
    360_000,
  );

  it('lands after a landing killed while its gates ran in a tree the agent user held', async () => {
    git('checkout', '-q', 'main');
    await writeFile(join(repo, 'README.md'), 'readme, moved on\n');
    git('commit', '-q', '-am', 'main moves on');
    const gating = join(dumps, 'land-gating');
    const killed = await epicflow(
      ['land', '--epic', 'plan', '--agent-user', 'epicflow-agent', '--no-sandbox'],
      (pid) => {
        void waitFor(gating).then(async () => {
          process.kill(-pid, 'SIGKILL');
          try {
            process.kill(Number(readFileSync(gating, 'utf8')), 'SIGKILL');
          } catch {
            // Already gone.
          }
        });
      },
    );
    expect(killed.code).toBeNull();
    const landTree = join(repo, '.git', 'epicflow', 'worktrees', 'plan', '_land');
    // Left as the killed landing left it: what is in it is the agent user's.
    expect(statSync(join(landTree, 'README.md')).uid).not.toBe(user.uid);

    const landed = await epicflow([
      'land',
      '--epic',
      'plan',
      '--agent-user',
      'epicflow-agent',
      '--no-sandbox',
    ]);
    expect(landed.output).not.toMatch(/Permission denied|EACCES/);
    expect(landed.code).toBe(0);
    expect(git('show', 'main:README.md')).toBe('readme, moved on');
    expect(git('show', 'main:src/a.txt')).toMatch(/^epicflow-agent(-\d+)?$/);
    expect(existsSync(landTree)).toBe(false);
  }, 540_000);
});
