/**
 * epicflow's own git reads no configuration from outside the repository: not
 * the home folder's (`~/.gitconfig`, `~/.config/git/*`), not the system's, not
 * the caller's GIT_CONFIG_* variables. Each attack below first proves that the
 * trap works for a plain git, then that epicflow's git never springs it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { isEpicflowError } from '../../../src/core/errors.js';
import { RemoteGit } from '../../../src/adapters/git/remote-git.js';
import { IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
const SAVED = { ...process.env };
const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const name of Object.keys(process.env)) {
    if (!(name in SAVED)) delete process.env[name];
  }
  Object.assign(process.env, SAVED);
  for (const c of cleanups.splice(0)) c();
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function repo(files?: Record<string, string>): Fixture {
  const f = makeRepo(files);
  cleanups.push(() => f.cleanup());
  return f;
}

function write(path: string, text: string, mode?: number): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  if (mode !== undefined) chmodSync(path, mode);
}

/** A command that notes that it ran (and passes stdin through, as a filter must). */
function trap(dir: string, marker: string): string {
  const path = join(dir, 'trap.sh');
  write(path, `#!/bin/sh\necho "trap $*" >> '${marker}'\ncat\n`, 0o755);
  return path;
}

/** Plain git with a given environment: to prove a trap is armed. */
function plainGit(cwd: string, env: Record<string, string>, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: {
      PATH: SAVED.PATH ?? '',
      GIT_AUTHOR_NAME: 'x',
      GIT_AUTHOR_EMAIL: 'x@example.com',
      GIT_COMMITTER_NAME: 'x',
      GIT_COMMITTER_EMAIL: 'x@example.com',
      ...env,
    },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs what epicflow does with a story: branches, worktrees, commits, catch-up, merge, diff, restore. */
async function storyLifecycle(f: Fixture, git: Git): Promise<{ changed: string[]; diff: string }> {
  const base = await git.defaultBase();
  await git.createBranch('epic/1', base);
  await git.createBranch('story/1/s', base);
  const root = join(dirname(f.dir), 'wt');
  await git.addWorktree(join(root, 'epic'), 'epic/1');
  await git.addWorktree(join(root, 's'), 'story/1/s');
  const epic = git.worktree(join(root, 'epic'));
  const story = git.worktree(join(root, 's'));
  write(join(story.path, 'a.txt'), 'story\n');
  write(join(story.path, 'hidden.txt'), 'h\n');
  write(join(story.path, 'also-hidden.txt'), 'h\n');
  write(join(story.path, 'stray.txt'), 's\n');
  await story.commitAll('story work');
  write(join(epic.path, 'a.txt'), 'epic\n');
  const epicSha = (await epic.commitAll('epic work')) as string;
  // Both changed a.txt: a three-way merge, where a merge driver would run; the epic's side wins.
  await story.catchUp(epicSha);
  const changed = (await story.changedPaths('epic/1')).map((c) => c.path).sort();
  await story.restorePaths(epicSha, ['stray.txt']);
  await story.commitAll('restore');
  const diff = await git.diff('epic/1', 'story/1/s');
  const merged = await epic.mergeNoFf('story/1/s', 'merge s');
  expect(merged.ok).toBe(true);
  await git.removeWorktree(story.path);
  return { changed, diff };
}

describe("epicflow's git and the home folder", () => {
  it('ignores a hostile ~/.gitconfig and ~/.config/git: no hook, filter, driver, pager, fsmonitor, ignore or insteadOf', async () => {
    const home = tempDir('epicflow-home-');
    const marker = join(home, 'trap-ran');
    const t = trap(home, marker);
    for (const hook of [
      'pre-commit',
      'post-commit',
      'post-checkout',
      'post-merge',
      'reference-transaction',
    ]) {
      write(join(home, 'hooks', hook), `#!/bin/sh\necho "hook $0" >> '${marker}'\n`, 0o755);
    }
    // Where ls-remote is sent by an insteadOf from an included file.
    const evil = join(home, 'evil');
    const evilRepo = join(evil, 'o', 'r.git');
    mkdirSync(evilRepo, { recursive: true });
    plainGit(evilRepo, {}, 'init', '-q', '--bare');
    write(
      join(home, 'more.gitconfig'),
      `[url "file://${evil}/"]\n\tinsteadOf = http://127.0.0.1:9/\n`,
    );
    write(
      join(home, '.gitconfig'),
      [
        '[core]',
        `\thooksPath = ${join(home, 'hooks')}`,
        `\tfsmonitor = ${t}`,
        `\tpager = ${t}`,
        `\tsshCommand = ${t}`,
        `\texcludesFile = ${join(home, 'ignore')}`,
        `\tattributesFile = ${join(home, 'attributes')}`,
        '[filter "trap"]',
        `\tclean = ${t}`,
        `\tsmudge = ${t}`,
        '[merge "trap"]',
        `\tdriver = ${t} %O %A %B`,
        '[diff "trap"]',
        `\ttextconv = ${t}`,
        '[diff]',
        `\texternal = ${t}`,
        '\tnoprefix = true',
        '[credential]',
        `\thelper = ${t}`,
        '[include]',
        `\tpath = ${join(home, 'more.gitconfig')}`,
        '',
      ].join('\n'),
    );
    write(join(home, 'ignore'), 'hidden.txt\n');
    write(join(home, 'attributes'), '* filter=trap merge=trap diff=trap\n');

    // Armed: plain git with this home obeys all of it.
    const scratch = tempDir('epicflow-scratch-');
    plainGit(scratch, { HOME: home }, 'init', '-q');
    write(join(scratch, 'x.txt'), 'x\n');
    plainGit(scratch, { HOME: home }, 'add', 'x.txt');
    expect(existsSync(marker)).toBe(true);
    expect(plainGit(scratch, { HOME: home }, 'check-ignore', 'hidden.txt')).toBe('hidden.txt\n');
    expect(
      plainGit(scratch, { HOME: home }, 'config', '--get', 'url.file://' + evil + '/.insteadof'),
    ).toBe('http://127.0.0.1:9/\n');
    rmSync(marker);

    const f = repo({ 'a.txt': 'base\n', 'stray.txt': 'base\n' });
    process.env.HOME = home;
    delete process.env.XDG_CONFIG_HOME;
    // The caller's own GIT_* variables never reach epicflow's git either.
    process.env.GIT_CONFIG_GLOBAL = join(home, '.gitconfig');
    process.env.GIT_CONFIG_COUNT = '1';
    process.env.GIT_CONFIG_KEY_0 = 'core.hooksPath';
    process.env.GIT_CONFIG_VALUE_0 = join(home, 'hooks');

    const git = await Git.open(f.dir, IDENTITY);
    const { changed, diff } = await storyLifecycle(f, git);
    // Nothing was hidden from the commit, and so from the perimeter.
    expect(changed).toEqual(['also-hidden.txt', 'hidden.txt', 'stray.txt']);
    // diff.noprefix and the textconv changed nothing either.
    expect(diff).toContain('+++ b/hidden.txt');
    expect(existsSync(marker)).toBe(false);

    // A network command goes where epicflow sends it, not where an insteadOf points.
    const remote = new RemoteGit({
      cwd: f.dir,
      serverUrl: 'http://127.0.0.1:9',
      repository: 'o/r',
      token: 'not-a-token',
      identity: IDENTITY,
    });
    const err = await remote.lsRemote(['main']).catch((e: unknown) => e);
    expect(isEpicflowError(err, 'git')).toBe(true);
    expect((err as Error).message).toBe('cannot read the branches of o/r');
    expect(existsSync(marker)).toBe(false);
  });

  it('ignores the files git reads from ~/.config/git by default: ignore, attributes, config', async () => {
    const home = tempDir('epicflow-home-');
    const marker = join(home, 'trap-ran');
    const t = trap(home, marker);
    write(join(home, '.config', 'git', 'ignore'), 'also-hidden.txt\n');
    write(join(home, '.config', 'git', 'attributes'), '*.txt filter=trap\n');
    write(
      join(home, '.config', 'git', 'config'),
      `[filter "trap"]\n\tclean = ${t}\n\tsmudge = ${t}\n`,
    );
    const scratch = tempDir('epicflow-scratch-');
    plainGit(scratch, { HOME: home }, 'init', '-q');
    write(join(scratch, 'x.txt'), 'x\n');
    plainGit(scratch, { HOME: home }, 'add', 'x.txt');
    expect(existsSync(marker)).toBe(true);
    expect(plainGit(scratch, { HOME: home }, 'check-ignore', 'also-hidden.txt')).toBe(
      'also-hidden.txt\n',
    );
    rmSync(marker);

    const f = repo({ 'a.txt': 'base\n', 'stray.txt': 'base\n' });
    process.env.HOME = home;
    delete process.env.XDG_CONFIG_HOME;
    const { changed } = await storyLifecycle(f, await Git.open(f.dir, IDENTITY));
    expect(changed).toEqual(['also-hidden.txt', 'hidden.txt', 'stray.txt']);
    expect(existsSync(marker)).toBe(false);
  });

  /**
   * A story commit epicflow makes, opened without an identity, with Pat Person in
   * `~/.gitconfig` (and whatever `configure` sets in the repository): its log line in `format`.
   */
  async function storyCommitSigned(format: string, configure = (_f: Fixture) => {}) {
    const home = tempDir('epicflow-home-');
    write(join(home, '.gitconfig'), '[user]\n\tname = Pat Person\n\temail = pat@example.com\n');
    const f = repo();
    configure(f);
    process.env.HOME = home;
    const git = await Git.open(f.dir);
    await git.createBranch('story/1/s', await git.defaultBase());
    const path = join(dirname(f.dir), 'wt', 's');
    await git.addWorktree(path, 'story/1/s');
    write(join(path, 'new.txt'), 'n\n');
    await git.worktree(path).commitAll('work');
    return f.git('log', '-1', `--format=${format}`, 'story/1/s').trim();
  }

  it('still signs commits with the identity configured in ~/.gitconfig when none is given', async () => {
    expect(await storyCommitSigned('%an <%ae>|%cn <%ce>')).toBe(
      'Pat Person <pat@example.com>|Pat Person <pat@example.com>',
    );
  });
  it("signs with the repository's own identity over ~/.gitconfig's, as git would", async () => {
    expect(
      await storyCommitSigned('%an <%ae>', (f) => f.git('config', 'user.name', 'Repo Person')),
    ).toBe('Repo Person <pat@example.com>');
  });
});

describe("epicflow's git and the system configuration", () => {
  it('runs every git with the system config switched off, so a system-level filter never runs', async () => {
    const dir = tempDir('epicflow-system-');
    const marker = join(dir, 'trap-ran');
    const t = trap(dir, marker);
    const system = join(dir, 'gitconfig');
    write(
      system,
      `[filter "trap"]\n\tclean = ${t}\n\tsmudge = ${t}\n[core]\n\tfsmonitor = ${t}\n\thooksPath = ${dir}\n`,
    );
    // A git on PATH that hands every command a system config, as /etc/gitconfig would be.
    const envLog = join(dir, 'env.log');
    const wrapper = join(dir, 'bin', 'git');
    write(
      wrapper,
      [
        '#!/bin/sh',
        `printf '%s %s\\n' "\${GIT_CONFIG_NOSYSTEM-unset}" "\${GIT_CONFIG_GLOBAL-unset}" >> '${envLog}'`,
        `GIT_CONFIG_SYSTEM='${system}' exec '${REAL_GIT}' "$@"`,
        '',
      ].join('\n'),
      0o755,
    );
    // Armed: the wrapper's git reads the system config and runs the filter.
    const scratch = tempDir('epicflow-scratch-');
    const quiet = { cwd: scratch, env: { PATH: SAVED.PATH ?? '' }, stdio: 'pipe' as const };
    execFileSync(wrapper, ['init', '-q'], quiet);
    write(join(scratch, '.gitattributes'), '*.txt filter=trap\n');
    write(join(scratch, 'x.txt'), 'x\n');
    execFileSync(wrapper, ['add', 'x.txt'], quiet);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    rmSync(envLog);

    const f = repo({
      '.gitattributes': '*.txt filter=trap\n',
      'a.txt': 'base\n',
      'stray.txt': 'b\n',
    });
    process.env.PATH = `${join(dir, 'bin')}:${SAVED.PATH ?? ''}`;
    const git = await Git.open(f.dir, IDENTITY);
    await storyLifecycle(f, git);
    expect(existsSync(marker)).toBe(false);
    // Every one of epicflow's git commands went through the wrapper, and each had it switched off.
    const seen = readFileSync(envLog, 'utf8').trim().split('\n');
    expect(seen.length).toBeGreaterThan(20);
    expect(new Set(seen)).toEqual(new Set(['1 /dev/null']));
  });
});
