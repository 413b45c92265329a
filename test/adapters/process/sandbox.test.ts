/**
 * The kernel sandbox (bubblewrap) around an untrusted step, attacked as a prompt-injected
 * agent would: it leaves processes behind (a thread whose leader exited, a double fork
 * in a session of its own with an emptied environment), reads every process's
 * environment, looks for epicflow's state, the repository's `.git` and other stories'
 * trees, plants files in its home and `/tmp` for the next step, and tries `sudo`. Runs
 * as whoever runs the suite: no root needed where the kernel allows user namespaces.
 * Every folder is the test's own.
 *
 * @needs sandbox
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownKeyring } from '../../../src/adapters/process/keyring.js';
import { sandbox, type Sandbox } from '../../../src/adapters/process/sandbox.js';
import { sameUser, type Untrusted } from '../../../src/adapters/process/untrusted.js';
import { bundledEntry } from '../../support/bundled-entry.js';
import { describeNeeding } from '../../support/needs.js';
import { holder as keyHolder, READER } from './support/keyring-scripts.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const SCRATCH_CHILD = join(dirname(fileURLToPath(import.meta.url)), 'support', 'scratch-child.ts');
const SECRET = `epicflow-secret-${process.pid}-${Date.now()}`;
let dir: string;
let tree: string;
let other: string;
let state: string;
let walls: Sandbox;
let untrusted: Untrusted;
let holder: ChildProcess;

/** A C program whose main thread exits while another thread goes on writing `$OUT`. */
const LEADERLESS = `
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *work(void *a) {
  for (int i = 0; i < 100; i++) {
    FILE *f = fopen(getenv("OUT"), "a");
    if (f) { fprintf(f, "alive %d\\n", i); fclose(f); }
    usleep(100000);
  }
  return a;
}
int main(void) {
  if (fork() == 0) { setsid(); pthread_t t; pthread_create(&t, 0, work, 0); pthread_exit(0); }
  return 0;
}
`;

/** Host processes still running (not dead, waiting to be reaped) that `match` picks by pid. */
function running(match: (pid: string) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (match(entry) && !/^State:\s+[ZX]/m.test(status)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** Host processes whose command line names `needle`. */
const hostProcesses = (needle: string): number[] =>
  running((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle));

/** Host processes in the PID namespace `ns`. */
const inNamespace = (ns: string): number[] =>
  running((pid) => readlinkSync(`/proc/${pid}/ns/pid`) === ns);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-sandbox-test-'));
  tree = join(dir, 'trees', 'story-a');
  other = join(dir, 'trees', 'story-b');
  state = join(dir, 'state');
  for (const d of [tree, other, state, join(dir, 'repo', '.git')])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(other, 'app.js'), 'module.exports = 1;\n');
  writeFileSync(join(state, 'story-b.json'), '{"status":"running"}\n');
  writeFileSync(join(dir, 'repo', '.git', 'config'), '[core]\n');
  walls = await sandbox(env, join(dir, 'scratch'));
  untrusted = sameUser(walls);
  // Stands for epicflow's own process: a secret in its environment.
  holder = spawn('sleep', ['120'], { env: { ...env, EPICFLOW_HELD: SECRET }, stdio: 'ignore' });
});

afterAll(async () => {
  holder.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** The at jobs queued on the host (other users' included), by number. */
function atJobs(): string[] {
  try {
    const out = execFileSync('atq', [], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.split('\t')[0] ?? '')
      .sort();
  } catch {
    return []; // no at here: nothing could be queued either
  }
}

const step = (script: string, options: { ownHome?: boolean; home?: string } = {}) =>
  untrusted.runShell(script, {
    cwd: tree,
    env: { ...env, ...(options.home === undefined ? {} : { HOME: options.home }) },
    timeoutMs: 60_000,
    ...(options.ownHome === undefined ? {} : { ownHome: options.ownHome }),
    ...(options.home === undefined ? {} : { writable: [options.home] }),
  });

describe('the kernel sandbox around an untrusted step', () => {
  it("leaves no folder of its own in the system's temporary folder once epicflow exited", async () => {
    const tmp = join(dir, 'system-tmp');
    mkdirSync(tmp);
    const out = execFileSync(process.execPath, [await bundledEntry(SCRATCH_CHILD), tree], {
      env: { ...env, TMPDIR: tmp },
      encoding: 'utf8',
    });
    // The step ran, in a /tmp of its own under that folder …
    expect(out.trim()).toBe('ok');
    // … which went with the process.
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('says what it is', () => {
    expect(untrusted.walled).toBe(true);
    expect(untrusted.description).toContain('inside the kernel sandbox (bubblewrap)');
  });

  it('ends a thread whose leader exited, and a double fork that emptied its environment, when the step ends', async () => {
    const source = join(tree, 'leaderless.c');
    writeFileSync(source, LEADERLESS);
    const r = await step(
      [
        `cc -pthread -o ${tree}/leaderless-bin ${source}`,
        `OUT=${tree}/leftover.log ${tree}/leaderless-bin`,
        `setsid env -i sh -c 'while true; do echo x >> ${tree}/forked.log; sleep 0.1; done' &`,
        // Both are alive when the step's own shell ends.
        'sleep 0.5',
      ].join('\n'),
    );
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const lines = (f: string): number =>
      existsSync(f) ? readFileSync(f, 'utf8').split('\n').length : 0;
    const before = [lines(join(tree, 'leftover.log')), lines(join(tree, 'forked.log'))];
    expect(before[0]).toBeGreaterThan(0);
    expect(before[1]).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect([lines(join(tree, 'leftover.log')), lines(join(tree, 'forked.log'))]).toEqual(before);
    expect(hostProcesses(`${tree}/leaderless-bin`)).toEqual([]);
  });

  it('exits only once every process the step started has ended', async () => {
    // Read the moment bubblewrap exits, twenty times: with bubblewrap's own init as the
    // namespace's pid 1, busy leftovers were still running after about one exit in three.
    let left = 0;
    for (let i = 0; i < 20; i++) {
      const needle = `left-${process.pid}-${i}`;
      const busy = `setsid sh -c 'while :; do :; done; ${needle}' </dev/null >/dev/null 2>&1 &`;
      const run = await walls.step(['sh', '-c', `${busy}\n${busy}\necho started`], {
        cwd: tree,
        env,
        writable: [],
      });
      const r = spawnSync(run.argv[0] ?? '', run.argv.slice(1), { env: run.env, encoding: 'utf8' });
      expect(r.stdout).toBe('started\n');
      left += hostProcesses(needle).length;
      await run.done();
    }
    expect(left).toBe(0);
  });

  it.each([
    ['ends by itself', 'echo started', 60_000],
    ['is killed for its timeout', 'exec sleep 60', 1_500],
  ])(
    'has ended every process it started when a step that %s returns',
    async (_how, last, timeoutMs) => {
      // Busy processes in sessions of their own, none holding the step's output: the kernel
      // takes a moment to end them all once the step's command is over.
      const busy = `setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &`;
      const r = await untrusted.runShell(
        [`readlink /proc/self/ns/pid > ${tree}/namespace`, ...Array(8).fill(busy), last].join('\n'),
        { cwd: tree, env, timeoutMs },
      );
      expect(r.timedOut).toBe(timeoutMs < 60_000);
      const namespace = readFileSync(join(tree, 'namespace'), 'utf8').trim();
      expect(namespace).toMatch(/^pid:\[\d+\]$/);
      expect(inNamespace(namespace)).toEqual([]);
    },
  );

  it('shows no process of the host: no environment of epicflow’s to read', async () => {
    const r = await step(
      `for f in /proc/[0-9]*/environ; do cat "$f" 2>/dev/null | tr '\\0' '\\n'; done; ls /proc | grep -c '^[0-9]'`,
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain(SECRET);
    // Only the step's own processes: the sandbox's init, the shell and its pipeline.
    expect(Number(r.stdout.trim().split('\n').pop())).toBeLessThan(6);
  });

  it('gets a session keyring of its own: a key epicflow’s process holds there is not the step’s to read', async () => {
    const { prefix } = await ownKeyring();
    expect(prefix.length).toBeGreaterThan(0);
    const prepared = await walls.step(['/usr/bin/perl', '-e', READER], {
      cwd: tree,
      env,
      writable: [],
    });
    const at = prepared.argv.indexOf(prefix[2] ?? '') - 2;
    const without = [...prepared.argv.slice(0, at), ...prepared.argv.slice(at + prefix.length)];
    const run = (argv: string[]) =>
      spawnSync('/usr/bin/perl', ['-e', keyHolder(SECRET), '--', ...argv], {
        env: prepared.env,
        encoding: 'utf8',
      });
    try {
      const walled = run(prepared.argv);
      expect({ out: walled.stdout, err: walled.stderr }).toEqual({ out: 'no-key\n', err: '' });
      // The route is real: the same step without a keyring of its own reads the secret.
      expect(run(without).stdout).toBe(`${SECRET}\n`);
    } finally {
      await prepared.done();
    }
  });

  it('sees its own tree, and neither epicflow’s state, the repository’s .git nor another story’s tree', async () => {
    const r = await step(
      [
        'echo mine > mine.txt',
        `cat ${join(state, 'story-b.json')} && echo READ-STATE`,
        `echo '{"status":"done"}' > ${join(state, 'story-b.json')} && echo FORGED`,
        `cat ${join(dir, 'repo', '.git', 'config')} && echo READ-GIT`,
        `echo 'module.exports = 2;' > ${join(other, 'app.js')} && echo WROTE-OTHER`,
        `ls ${dir}`,
        'true',
      ].join('\n'),
    );
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(tree, 'mine.txt'), 'utf8')).toBe('mine\n');
    for (const word of ['READ-STATE', 'FORGED', 'READ-GIT', 'WROTE-OTHER']) {
      expect(r.stdout).not.toContain(word);
    }
    expect(readFileSync(join(state, 'story-b.json'), 'utf8')).toBe('{"status":"running"}\n');
    expect(readFileSync(join(other, 'app.js'), 'utf8')).toBe('module.exports = 1;\n');
    // Of the test's folder, only the way down to the step's tree (and its own scratch) is there.
    expect(r.stdout.trim().split('\n').sort()).toEqual(['scratch', 'trees']);
    const trees = await step(`ls ${join(dir, 'trees')}`);
    expect(trees.stdout.trim()).toBe('story-a');
  });

  it('gives each step a fresh /tmp and a fresh home: nothing one step plants is there for the next', async () => {
    const plant = await step(
      'echo "registry=http://127.0.0.1:9/" > ~/.npmrc && echo planted > /tmp/planted && echo "$HOME"',
      { ownHome: true },
    );
    expect(plant.exitCode).toBe(0);
    const home = plant.stdout.trim();
    const next = await step('ls -A ~; cat ~/.npmrc /tmp/planted 2>/dev/null; true', {
      ownHome: true,
    });
    expect(next.stdout).toBe('');
    // The step's folders are gone from the host too.
    expect(existsSync(home)).toBe(false);
  });

  it('leaves nothing in /dev/shm and schedules nothing: those of the host are not its own', async () => {
    const mark = `epicflow-planted-${process.pid}`;
    const atBefore = atJobs();
    const r = await step(
      `touch /dev/shm/${mark} && echo shm-ok; echo "* * * * * touch /tmp/${mark}" | crontab - 2>&1; echo "crontab: $?"; echo "touch /tmp/${mark}" | at now + 1 minute 2>&1; true`,
    );
    expect(r.stdout).toContain('shm-ok');
    expect(r.stdout).not.toContain('crontab: 0');
    expect(existsSync(join('/dev/shm', mark))).toBe(false);
    const crontab = (() => {
      try {
        return execFileSync('crontab', ['-l'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        });
      } catch {
        return '';
      }
    })();
    expect(crontab).not.toContain(mark);
    expect(atJobs()).toEqual(atBefore);
  });

  it('keeps an executor’s own home (given as writable) from one turn to the next', async () => {
    const home = join(dir, 'homes', 'story-a', 'coder');
    mkdirSync(home, { recursive: true });
    expect((await step('echo session > ~/.session', { home })).exitCode).toBe(0);
    expect(readFileSync(join(home, '.session'), 'utf8')).toBe('session\n');
  });

  it('has no new privileges and no capabilities: no sudo inside', async () => {
    const r = await step(
      "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status; (sudo -n true 2>/dev/null && echo SUDO-WORKED); true",
    );
    expect(r.stdout).toContain('NoNewPrivs:\t1');
    expect(r.stdout).toContain('CapEff:\t0000000000000000');
    expect(r.stdout).not.toContain('SUDO-WORKED');
  });

  it('veils what a helper must not see of its tree, a link followed, and leaves it all as it was', async () => {
    // What a coder leaves for the judge: a plugin folder, a `.env` that would send the
    // judge's key elsewhere, and a link to a second plugin folder in its tree.
    mkdirSync(join(tree, '.opencode', 'plugin'), { recursive: true });
    writeFileSync(join(tree, '.opencode', 'plugin', 'steal.js'), 'steal();\n');
    writeFileSync(join(tree, '.env'), 'OPENAI_BASE_URL=http://attacker.invalid\n');
    mkdirSync(join(tree, 'src', 'more'), { recursive: true });
    writeFileSync(join(tree, 'src', 'more', 'steal.js'), 'steal();\n');
    symlinkSync('src/more', join(tree, '.gemini'));
    const r = await untrusted.runShell(
      'ls -A .opencode .gemini/; cat .env src/more/steal.js; ls .claude 2>/dev/null || echo no-claude',
      {
        cwd: tree,
        env,
        timeoutMs: 60_000,
        veiled: ['.opencode', '.env', '.gemini', '.claude'].map((p) => join(tree, p)),
      },
    );
    expect(r.exitCode).toBe(0);
    // Empty where they were; a veiled path that was not there is not made.
    expect(r.stdout.split('\n').filter((l) => l !== '')).toEqual([
      '.gemini/:',
      '.opencode:',
      'no-claude',
    ]);
    expect(readdirSync(join(tree, '.opencode', 'plugin'))).toEqual(['steal.js']);
    expect(readFileSync(join(tree, '.env'), 'utf8')).toContain('attacker.invalid');
    expect(readFileSync(join(tree, 'src', 'more', 'steal.js'), 'utf8')).toBe('steal();\n');
    expect(existsSync(join(tree, '.claude'))).toBe(false);
  });

  it('reaches the tools on its PATH and the files its command names', async () => {
    const script = join(dir, 'agent.mjs');
    writeFileSync(script, "console.log('agent ran in', process.cwd());\n");
    const r = await untrusted.run(['node', script], { cwd: tree, env, timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(`agent ran in ${tree}`);
    expect(execFileSync('git', ['--version'], { encoding: 'utf8' })).toMatch(/^git version/);
    expect((await step('git --version')).stdout).toMatch(/^git version/);
  });
});

describe('tools in the kernel sandbox', () => {
  it("keeps pnpm's store in the step's home, never at the top of its tree (a mount of its own); npm hears nothing of it", async () => {
    const told = async (): Promise<string[]> => {
      const r = await untrusted.runShell(
        'echo "npm:$npm_config_store_dir"; echo "pnpm:$pnpm_config_store_dir"; echo "$HOME"',
        { cwd: tree, env, ownHome: true, timeoutMs: 60_000 },
      );
      return r.stdout.trim().split('\n');
    };
    // A tree of npm's: npm would say "Unknown env config" of npm_config_store_dir.
    const [npmStore, pnpmStore, home] = await told();
    expect(home).toMatch(/^\//);
    expect([npmStore, pnpmStore]).toEqual(['npm:', `pnpm:${home}/.local/share/pnpm/store`]);
    // A tree of pnpm's: pnpm up to 10 reads the first, 11 and later the second.
    writeFileSync(join(tree, 'pnpm-lock.yaml'), "lockfileVersion: '9.0'\n");
    try {
      const [npmStore2, pnpmStore2, home2] = await told();
      expect([npmStore2, pnpmStore2]).toEqual([
        `npm:${home2}/.local/share/pnpm/store`,
        `pnpm:${home2}/.local/share/pnpm/store`,
      ]);
    } finally {
      await rm(join(tree, 'pnpm-lock.yaml'), { force: true });
    }
  });
});

describeNeeding(['go'], 'Go in the kernel sandbox', () => {
  it('builds a command in a tree whose .git leads to the repository it cannot see', async () => {
    const module = join(tree, 'cmd-module');
    mkdirSync(module, { recursive: true });
    writeFileSync(join(module, 'go.mod'), 'module example.com/tool\n\ngo 1.19\n');
    writeFileSync(join(module, 'main.go'), 'package main\n\nfunc main() {}\n');
    // As in a linked tree: the git folder it names is out of the step's sight.
    writeFileSync(join(module, '.git'), `gitdir: ${join(dir, 'repo', '.git', 'worktrees', 'a')}\n`);
    const r = await untrusted.runShell('go build ./... && echo BUILT', {
      cwd: module,
      env,
      ownHome: true,
      timeoutMs: 120_000,
    });
    expect(r.stderr).not.toContain('error obtaining VCS status');
    expect(r.stdout.trim()).toBe('BUILT');
  });
});
