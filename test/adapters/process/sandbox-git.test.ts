/**
 * git inside the kernel sandbox: a step in a linked tree of the repository gets a
 * repository of its own where the tree's `.git` file leads (its branch, the repository's
 * history and tags, an index of its commit), and of the repository's git folder nothing
 * but the objects, read-only. Attacked as a prompt-injected agent would: it looks for the
 * token a checkout keeps in the repository's `config`, writes objects, refs, hooks and an
 * `fsmonitor` into what it is given, and moves the branches. Runs as whoever runs the suite;
 * every folder is the test's own.
 *
 * @needs sandbox
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  type Dirent,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { makeStepRepository } from '../../../src/adapters/git/step-repository.js';
import { sandbox } from '../../../src/adapters/process/sandbox.js';
import { sameUser, type Untrusted } from '../../../src/adapters/process/untrusted.js';
import { describeNeeding } from '../../support/needs.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
const TOKEN = `ghs_${process.pid}secret${Date.now()}`;
let dir: string;
let repo: string;
let gitDir: string;
let tree: string;
let untrusted: Untrusted;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], {
    encoding: 'utf8',
    env: { ...env, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

/** Every file under `folder`, by path relative to it. */
function filesUnder(folder: string): string[] {
  return (readdirSync(folder, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(folder.length + 1))
    .sort();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-sandbox-git-'));
  repo = join(dir, 'repo');
  gitDir = join(repo, '.git');
  mkdirSync(repo);
  // A folder with a `pack` folder, as an object folder has, that is not one.
  mkdirSync(join(dir, 'state-of-the-test', 'pack'), { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Dev');
  git(repo, 'config', 'user.email', 'dev@example.com');
  writeFileSync(join(repo, 'app.js'), 'module.exports = 1;\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'first');
  git(repo, 'tag', '-a', 'v1.2.0', '-m', 'release');
  writeFileSync(join(repo, 'lib.js'), 'module.exports = 2;\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'second');
  // What a checkout keeps in the repository's config: the token, as a remote's URL and as
  // the header actions/checkout persists.
  git(repo, 'config', 'remote.origin.url', `https://x-access-token:${TOKEN}@github.com/o/r.git`);
  git(repo, 'config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${TOKEN}`);
  git(repo, 'branch', 'epic/e');
  tree = join(dir, 'trees', 'story');
  git(repo, 'worktree', 'add', '-q', '-b', 'story/e/a', tree, 'epic/e');
  untrusted = sameUser(await sandbox(env, join(dir, 'scratch'), [], gitDir));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A step in `cwd`, its tree handed whole (as a package's checks get it). */
const step = (script: string, cwd: string = tree) =>
  untrusted.runShell(script, {
    cwd,
    env,
    writable: cwd.startsWith(`${tree}/`) ? [tree] : [],
    ownHome: true,
    timeoutMs: 60_000,
  });

describe("a step's own repository in the kernel sandbox", () => {
  it('answers git as a clone would: its branch, its changes, the history, the tags', async () => {
    writeFileSync(join(tree, 'app.js'), 'module.exports = 3;\n');
    writeFileSync(join(tree, 'new.js'), 'new\n');
    try {
      const r = await step(
        [
          'git branch --show-current',
          'git status --porcelain',
          'git log --format=%s',
          'git describe --tags',
          'git diff --stat main -- app.js | tail -1',
          'git rev-parse HEAD',
        ].join(' && '),
      );
      expect(r.stderr).toBe('');
      const head = git(repo, 'rev-parse', 'story/e/a');
      expect(r.stdout.trim().split('\n')).toEqual([
        'story/e/a',
        ' M app.js',
        '?? new.js',
        'second',
        'first',
        `v1.2.0-1-g${head.slice(0, 7)}`,
        ' 1 file changed, 1 insertion(+), 1 deletion(-)',
        head,
      ]);
      // From a folder inside the tree (a package's checks) too.
      mkdirSync(join(tree, 'pkg'), { recursive: true });
      const inPackage = await step('git rev-parse --show-toplevel', join(tree, 'pkg'));
      expect(inPackage.stdout.trim()).toBe(tree);
    } finally {
      git(tree, 'checkout', '--', 'app.js');
      await rm(join(tree, 'new.js'), { force: true });
      await rm(join(tree, 'pkg'), { recursive: true, force: true });
    }
  });

  it("leaves out of its git status the files setup made in the tree, as the story's commits do", async () => {
    // What a setup makes: new files (one whose name git would read as a pattern) and a
    // change to a tracked one; then the coder's own change.
    mkdirSync(join(tree, '.venv', 'bin'), { recursive: true });
    writeFileSync(join(tree, '.venv', 'bin', 'python'), '#!/bin/sh\n');
    writeFileSync(join(tree, 'odd[1]*.txt'), 'odd\n');
    writeFileSync(join(tree, 'lib.js'), 'module.exports = 22;\n');
    try {
      const set = await (await Git.open(repo)).worktree(tree).setAsideChanges();
      expect(set).toEqual(['.venv/bin/python', 'lib.js', 'odd[1]*.txt']);
      writeFileSync(join(tree, 'mine.js'), 'mine\n');
      writeFileSync(join(tree, 'odd1x.txt'), "not setup's\n");
      const r = await step('git status --porcelain');
      // A tracked file setup changed stays: the step may change it too, and sees its change.
      expect({ out: r.stdout, err: r.stderr }).toEqual({
        out: ' M lib.js\n?? mine.js\n?? odd1x.txt\n',
        err: '',
      });
    } finally {
      git(tree, 'checkout', '--', 'lib.js');
      for (const f of ['.venv', 'odd[1]*.txt', 'mine.js', 'odd1x.txt']) {
        await rm(join(tree, f), { recursive: true, force: true });
      }
      await rm(join(gitDir, 'worktrees', 'story', 'epicflow-set-aside.json'), { force: true });
    }
  });

  it("sees nothing of the repository's git folder but its objects: not the token in its config", async () => {
    const r = await step(
      [
        'git config --list',
        `ls -A ${gitDir}`,
        `ls -A ${join(gitDir, 'worktrees')}`,
        `cat ${join(gitDir, 'config')} 2>/dev/null && echo READ-CONFIG`,
        `cat "$(git rev-parse --git-common-dir)/config"`,
        `grep -rl ${TOKEN} ${gitDir} 2>/dev/null && echo FOUND-TOKEN`,
        'env | grep -i token',
        'true',
      ].join('\n'),
    );
    expect(r.stdout).not.toContain(TOKEN);
    expect(r.stdout).not.toMatch(/READ-CONFIG|FOUND-TOKEN|remote\.|extraheader/);
    expect(r.stdout).toContain('core.repositoryformatversion=0');
    // The git folder as the step sees it: the objects and its own tree's folder.
    expect(r.stdout).toContain('objects\nworktrees\nstory\n');
  });

  it('keeps what the step writes in its repository from the repository, from epicflow and from the next step', async () => {
    const before = {
      refs: git(repo, 'for-each-ref', '--format=%(objectname) %(refname)'),
      config: readFileSync(join(gitDir, 'config'), 'utf8'),
      objects: filesUnder(join(gitDir, 'objects')),
      admin: filesUnder(join(gitDir, 'worktrees', 'story')),
      head: readFileSync(join(gitDir, 'worktrees', 'story', 'HEAD'), 'utf8'),
    };
    const r = await step(
      [
        'echo planted > planted.txt && git add planted.txt',
        'git -c user.name=a -c user.email=a@b commit -qm planted && echo COMMITTED',
        'git tag v9.9.9 && git update-ref refs/heads/main HEAD && git update-ref refs/heads/epic/e HEAD',
        'git config core.fsmonitor "touch $PWD/../FSMONITOR-RAN"',
        'git config remote.origin.url https://evil.example/r.git',
        'mkdir -p "$(git rev-parse --git-dir)/hooks"',
        'printf "#!/bin/sh\\ntouch $PWD/../HOOK-RAN\\n" > "$(git rev-parse --git-dir)/hooks/post-checkout"',
        `touch ${join(gitDir, 'objects', 'planted')} 2>/dev/null && echo WROTE-OBJECTS`,
        // The sandbox's own: an empty folder stands where the repository's is.
        `echo x > ${join(gitDir, 'config')}`,
        'true',
      ].join('\n'),
    );
    expect(r.stdout).toContain('COMMITTED');
    expect(r.stdout).not.toContain('WROTE-OBJECTS');
    await rm(join(tree, 'planted.txt'), { force: true });
    expect({
      refs: git(repo, 'for-each-ref', '--format=%(objectname) %(refname)'),
      config: readFileSync(join(gitDir, 'config'), 'utf8'),
      objects: filesUnder(join(gitDir, 'objects')),
      admin: filesUnder(join(gitDir, 'worktrees', 'story')),
      head: readFileSync(join(gitDir, 'worktrees', 'story', 'HEAD'), 'utf8'),
    }).toEqual(before);
    // epicflow's own git in the tree runs none of it.
    git(repo, `--git-dir=${join(gitDir, 'worktrees', 'story')}`, `--work-tree=${tree}`, 'status');
    expect(existsSync(join(dir, 'trees', 'FSMONITOR-RAN'))).toBe(false);
    expect(existsSync(join(dir, 'trees', 'HOOK-RAN'))).toBe(false);
    // The next step starts from the repository again.
    const next = await step(
      'git log -1 --format=%s; git tag; git config --get core.fsmonitor; git config --get remote.origin.url; git rev-parse main; true',
    );
    expect(next.stdout.trim().split('\n')).toEqual([
      'second',
      'v1.2.0',
      git(repo, 'rev-parse', 'main'),
    ]);
  });

  it("reads the branch from the repository's side, whatever the tree's .git file says", async () => {
    const into = join(dir, 'made');
    // What code that ran in the tree may have made of its `.git` file.
    const dotGit = readFileSync(join(tree, '.git'), 'utf8');
    writeFileSync(join(tree, '.git'), `gitdir: ${join(gitDir, 'worktrees', 'elsewhere')}\n`);
    const made = await makeStepRepository(gitDir, [tree], into).finally(() =>
      writeFileSync(join(tree, '.git'), dotGit),
    );
    expect(made).toEqual({
      folder: into,
      at: join(gitDir, 'worktrees', 'story'),
      objects: [join(gitDir, 'objects')],
    });
    expect(readFileSync(join(into, 'HEAD'), 'utf8')).toBe('ref: refs/heads/story/e/a\n');
    expect(readFileSync(join(into, 'config'), 'utf8')).not.toContain(TOKEN);
    // Not a linked tree of the repository: none.
    const plain = join(dir, 'plain');
    mkdirSync(plain);
    expect(await makeStepRepository(gitDir, [plain, repo], join(dir, 'none'))).toBeUndefined();
    expect(existsSync(join(dir, 'none'))).toBe(false);
    // A step in such a folder runs as before, without one.
    const r = await step('git status 2>&1; true', plain);
    expect(r.stdout).toContain('not a git repository');
  });

  it('gives a clone that borrows its objects (--shared) the objects it borrows, read-only, and only those', async () => {
    const shared = join(dir, 'shared');
    execFileSync('git', ['clone', '-q', '--shared', repo, shared], { env });
    const sharedTree = join(dir, 'trees', 'shared-story');
    git(shared, 'worktree', 'add', '-q', '-b', 'story/sh', sharedTree);
    // A line that names no object folder shows nothing of the machine.
    const alternates = join(shared, '.git', 'objects', 'info', 'alternates');
    writeFileSync(
      alternates,
      `${readFileSync(alternates, 'utf8')}${dir}\n${join(dir, 'state-of-the-test')}\n`,
    );
    const walled = sameUser(await sandbox(env, join(dir, 'scratch'), [], join(shared, '.git')));
    const r = await walled.runShell(
      `git log --format=%s && git describe --tags && touch ${join(gitDir, 'objects', 'x')} 2>/dev/null || echo READ-ONLY; ls ${join(dir, 'state-of-the-test')} 2>/dev/null || echo NOT-SHOWN`,
      { cwd: sharedTree, env, ownHome: true, timeoutMs: 60_000 },
    );
    expect(r.stdout.trim().split('\n')).toEqual([
      'second',
      'first',
      `v1.2.0-1-g${git(repo, 'rev-parse', '--short=7', 'main')}`,
      'READ-ONLY',
      'NOT-SHOWN',
    ]);
    // git says that it does not see the folder that is not an object folder, and goes on.
    expect(r.stderr).not.toContain('fatal');
  });

  it('gives a shallow clone its history up to where the clone ends', async () => {
    const shallow = join(dir, 'shallow');
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${repo}`, shallow], { env });
    const shallowTree = join(dir, 'trees', 'shallow-story');
    git(shallow, 'worktree', 'add', '-q', '-b', 'story/s', shallowTree);
    const walled = sameUser(await sandbox(env, join(dir, 'scratch'), [], join(shallow, '.git')));
    const r = await walled.runShell('git log --format=%s && git status --porcelain', {
      cwd: shallowTree,
      env,
      ownHome: true,
      timeoutMs: 60_000,
    });
    expect({ out: r.stdout.trim(), err: r.stderr }).toEqual({ out: 'second', err: '' });
  });
});

describeNeeding(['go'], 'Go with a repository of its own in the kernel sandbox', () => {
  it('stamps a command it builds with the commit, as outside', async () => {
    const module = join(tree, 'cmd');
    mkdirSync(module, { recursive: true });
    writeFileSync(join(module, 'go.mod'), 'module example.com/tool\n\ngo 1.19\n');
    writeFileSync(join(module, 'main.go'), 'package main\n\nfunc main() {}\n');
    try {
      const r = await untrusted.runShell(
        'go build -o "$HOME/tool" . && go version -m "$HOME/tool" | grep vcs.revision',
        { cwd: module, env, writable: [tree], ownHome: true, timeoutMs: 120_000 },
      );
      expect(r.stdout.trim()).toBe(`build\tvcs.revision=${git(repo, 'rev-parse', 'story/e/a')}`);
    } finally {
      await rm(module, { recursive: true, force: true });
    }
  });
});
