import { afterEach, describe, expect, it } from '@jest/globals';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { describeError, isEpicflowError } from '../../../src/core/errors.js';
import { fixtureIn, IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const fixtures: Fixture[] = [];
function repo(files?: Record<string, string>): Fixture {
  const f = makeRepo(files);
  fixtures.push(f);
  return f;
}
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

function wtPath(f: Fixture, name: string): string {
  return join(dirname(f.dir), 'wt', name);
}

/** The user's checkout as they would see it. */
function snapshot(f: Fixture): string {
  return [
    f.git('rev-parse', 'HEAD'),
    f.git('symbolic-ref', 'HEAD'),
    f.git('status', '--porcelain', '--untracked-files=all'),
  ].join('|');
}

describe('Git.open', () => {
  it('refuses a folder that is not a git repository', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicflow-nogit-'));
    try {
      const err = await Git.open(dir).catch((e: unknown) => e);
      expect(isEpicflowError(err, 'git')).toBe(true);
      expect((err as Error).message).toBe(`not a git repository: ${dir}`);
      const missing = join(dir, 'missing');
      await expect(Git.open(missing)).rejects.toThrow(`not a git repository: ${missing}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the main work tree from a subfolder and from a linked worktree', async () => {
    const f = repo({ 'src/a.txt': 'a\n' });
    const git = await Git.open(join(f.dir, 'src'), IDENTITY);
    expect(git.root).toBe(f.dir);
    expect(git.gitDir).toBe(join(f.dir, '.git'));
    await git.createBranch('story/1/a', await git.defaultBase());
    await git.addWorktree(wtPath(f, 'a'), 'story/1/a');
    expect((await Git.open(wtPath(f, 'a'))).root).toBe(f.dir);
  });

  it('reads refs, the current branch and dirty paths', async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    const head = f.git('rev-parse', 'HEAD').trim();
    expect(await git.defaultBase()).toBe(head);
    expect(await git.revParse('main')).toBe(head);
    expect(await git.revParse('refs/heads/nope')).toBeNull();
    expect(await git.currentBranch()).toBe('main');
    expect(await git.dirtyPaths()).toEqual([]);
    f.write('README.md', 'changed\n');
    f.write('new dir/new file.txt', 'x\n');
    expect((await git.dirtyPaths()).sort()).toEqual(['README.md', 'new dir/new file.txt']);
    f.git('checkout', '-q', '--detach');
    expect(await git.currentBranch()).toBeNull();
  });
});

describe('branches and worktrees', () => {
  it('adds and removes worktrees for stories starting at once', async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    const base = await git.defaultBase();
    const ids = Array.from({ length: 12 }, (_, i) => `s${i}`);
    for (const id of ids) await git.createBranch(`story/1/${id}`, base);
    // Side by side, as parallel stories start: git alone fails one now and then
    // ("failed to read …/worktrees/s3/commondir") while another add writes its folder.
    for (let round = 0; round < 3; round++) {
      await Promise.all(ids.map((id) => git.addWorktree(wtPath(f, id), `story/1/${id}`)));
      await Promise.all(ids.map((id) => git.removeWorktree(wtPath(f, id))));
      // Removed with their registrations: git lists only the main tree, nothing to prune.
      expect(f.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
      expect(f.git('worktree', 'prune', '--dry-run', '--verbose')).toBe('');
    }
    await Promise.all(ids.map((id) => git.addWorktree(wtPath(f, id), `story/1/${id}`)));
    for (const id of ids) {
      expect(await git.worktree(wtPath(f, id)).head()).toBe(base);
    }
  });

  it("refuses a branch checked out in the user's own checkout, naming it and what to do", async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    await git.createBranch('story/1/a', await git.defaultBase());
    f.git('checkout', '-q', 'story/1/a');
    const err = await git.addWorktree(wtPath(f, 'a'), 'story/1/a').catch((e: unknown) => e);
    expect(isEpicflowError(err, 'git')).toBe(true);
    expect(describeError(err)).toContain(
      `it is checked out in your repository at ${f.dir}\n  switch that checkout to another branch, then run again`,
    );
    // The user's checkout is left as it was.
    expect(await git.currentBranch()).toBe('story/1/a');
  });

  it('never changes the user checkout or HEAD', async () => {
    const f = repo();
    f.write('local-edit.txt', 'uncommitted\n');
    const before = snapshot(f);
    const git = await Git.open(f.dir, IDENTITY);
    const base = await git.defaultBase();
    await git.createBranch('epic/7', base);
    await git.createBranch('story/7/a', base);
    await git.addWorktree(wtPath(f, 'a'), 'story/7/a');
    const wt = git.worktree(wtPath(f, 'a'));
    writeFileSync(join(wt.path, 'a.txt'), 'a\n');
    await wt.commitAll('story a');
    await git.addWorktree(wtPath(f, 'epic'), 'epic/7');
    const merged = await git.worktree(wtPath(f, 'epic')).mergeNoFf('story/7/a', 'merge a');
    expect(merged.ok).toBe(true);
    await git.removeWorktree(wtPath(f, 'a'));
    await git.deleteBranch('story/7/a');
    expect(snapshot(f)).toBe(before);
    expect(await git.revParse('story/7/a')).toBeNull();
  });

  it('creates branches idempotently and refuses to move an existing one', async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    const base = await git.defaultBase();
    await git.createBranch('epic/1', base);
    await git.createBranch('epic/1', base);
    f.write('x.txt', 'x\n');
    const other = f.commitAll('other');
    await expect(git.createBranch('epic/1', other)).rejects.toThrow(
      'branch already exists: epic/1',
    );
    await git.deleteBranch('never-existed');
  });

  it('never reuses a worktree as found: it checks the branch out anew, or re-adds a deleted one', async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    await git.createBranch('story/1/a', await git.defaultBase());
    const path = wtPath(f, 'a');
    await git.addWorktree(path, 'story/1/a');
    // What code that ran there left behind, tracked or not, is not taken over.
    writeFileSync(join(path, 'left.txt'), 'left behind\n');
    writeFileSync(join(path, 'README.md'), 'changed\n');
    await git.addWorktree(path, 'story/1/a');
    expect(existsSync(join(path, 'left.txt'))).toBe(false);
    expect(readFileSync(join(path, 'README.md'), 'utf8')).not.toBe('changed\n');
    rmSync(path, { recursive: true, force: true });
    await git.addWorktree(path, 'story/1/a');
    expect(existsSync(join(path, 'README.md'))).toBe(true);
    await git.createBranch('story/1/b', await git.defaultBase());
    await git.addWorktree(path, 'story/1/b');
    expect(fixtureIn(path).git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/story/1/b');
    await git.removeWorktree(path);
    await git.removeWorktree(path);
    expect(existsSync(path)).toBe(false);
  });

  it('adds a detached worktree at a commit, and checks out another anew', async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    const a = await git.defaultBase();
    f.write('b.txt', 'b\n');
    const b = f.commitAll('b');
    const path = wtPath(f, 'integration');
    await git.addWorktree(path, a);
    const tree = git.worktree(path);
    expect(await tree.head()).toBe(a);
    expect(fixtureIn(path).git('status', '--porcelain', '-b').trim()).toBe('## HEAD (no branch)');
    await git.addWorktree(path, b);
    expect(await git.worktree(path).head()).toBe(b);
    // A branch checked out elsewhere (the main tree) cannot be checked out here too.
    await expect(git.addWorktree(path, 'main')).rejects.toThrow(
      `cannot add a worktree for main at ${path}`,
    );
    await expect(git.addWorktree(wtPath(f, 'x'), 'nope')).rejects.toThrow(
      'no branch or commit nope',
    );
  });

  it("says why a command failed without git's advice about the graft file it is told to ignore", async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    await git.createBranch('story/1/a', await git.defaultBase());
    // A command that fails after git read the commits (and so the graft file).
    const error = await git
      .read('cannot compare', ['merge-base', '--is-ancestor', 'story/1/a', 'no-such-commit'])
      .catch((e: unknown) => e);
    expect(isEpicflowError(error, 'git')).toBe(true);
    const text = JSON.stringify(error);
    expect(text).toContain('no-such-commit');
    expect(text).not.toMatch(/hint:|graft/i);
  });

  it('commits a change made right after the checkout, even one of the same size (racily clean)', async () => {
    const f = repo({ 'a.txt': 'base\n' });
    const git = await Git.open(f.dir, IDENTITY);
    for (let i = 0; i < 3; i++) {
      const branch = `story/1/r${i}`;
      await git.createBranch(branch, await git.defaultBase());
      const path = wtPath(f, `r${i}`);
      await git.addWorktree(path, branch);
      const tree = git.worktree(path);
      await tree.head();
      // Same size as what was checked out, within the same second; the commit a second later.
      writeFileSync(join(path, 'a.txt'), 'epic\n');
      await delay(1100);
      expect(await tree.commitAll('change')).not.toBeNull();
      expect(fixtureIn(path).git('show', 'HEAD:a.txt')).toBe('epic\n');
    }
  });

  it('updates refs by compare-and-swap', async () => {
    const f = repo();
    const git = await Git.open(f.dir, IDENTITY);
    const a = await git.defaultBase();
    f.write('b.txt', 'b\n');
    const b = f.commitAll('b');
    expect(await git.updateRef('epic/9', a, null)).toBe(true);
    expect(await git.updateRef('epic/9', b, null)).toBe(false);
    expect(await git.updateRef('refs/heads/epic/9', b, a)).toBe(true);
    // Someone else moved it meanwhile: our expected value is stale.
    expect(await git.updateRef('epic/9', a, a)).toBe(false);
    expect(await git.revParse('epic/9')).toBe(b);
  });
});

describe('Worktree', () => {
  async function storySetup(files?: Record<string, string>) {
    const f = repo(files);
    const git = await Git.open(f.dir, IDENTITY);
    const base = await git.defaultBase();
    await git.createBranch('epic/1', base);
    await git.createBranch('story/1/s', base);
    await git.addWorktree(wtPath(f, 'epic'), 'epic/1');
    await git.addWorktree(wtPath(f, 's'), 'story/1/s');
    const epic = git.worktree(wtPath(f, 'epic'));
    const story = git.worktree(wtPath(f, 's'));
    return { f, git, base, epic, story, ef: fixtureIn(epic.path), sf: fixtureIn(story.path) };
  }

  it('commits everything, and nothing when clean', async () => {
    const { story, sf, base } = await storySetup();
    expect(await story.commitAll('nothing')).toBeNull();
    expect(await story.isClean()).toBe(true);
    sf.write('new.txt', 'n\n');
    sf.write('README.md', 'changed\n');
    expect(await story.isClean()).toBe(false);
    const sha = await story.commitAll('work');
    expect(sha).toBe(await story.head());
    expect(sha).not.toBe(base);
    expect(await story.isClean()).toBe(true);
    expect(sf.git('log', '-1', '--format=%an <%ae>|%s').trim()).toBe(
      'Epicflow Test <epicflow-test@example.com>|work',
    );
  });

  it('catches up with the epic: conflicting hunks take the epic side', async () => {
    const { story, sf, ef } = await storySetup({
      'shared.txt': 'one\ntwo\nthree\n',
      'gone.txt': 'g\n',
    });
    ef.write('shared.txt', 'one\nEPIC\nthree\n');
    ef.git('rm', '-q', 'gone.txt');
    ef.write('epic-only.txt', 'e\n');
    const epicSha = ef.commitAll('epic work');
    sf.write('shared.txt', 'one\nSTORY\nthree\n');
    sf.write('gone.txt', 'story changed it\n');
    sf.write('mine.txt', 'm\n');
    // Left uncommitted on purpose: catch-up must not lose it.
    const r = await story.catchUp(epicSha);
    expect(r.merged).toBe(true);
    expect(r.conflictsResolvedForEpic).toEqual(['gone.txt']);
    expect(readFileSync(join(story.path, 'shared.txt'), 'utf8')).toBe('one\nEPIC\nthree\n');
    expect(existsSync(join(story.path, 'gone.txt'))).toBe(false);
    expect(readFileSync(join(story.path, 'mine.txt'), 'utf8')).toBe('m\n');
    expect(readFileSync(join(story.path, 'epic-only.txt'), 'utf8')).toBe('e\n');
    expect(await story.isClean()).toBe(true);
    sf.git('merge-base', '--is-ancestor', epicSha, 'HEAD');
    expect(await story.catchUp(epicSha)).toEqual({ merged: false, conflictsResolvedForEpic: [] });
  });

  it("set aside: setup's files stay out of commits until changed, and make way for a catch-up", async () => {
    const { story, sf, ef } = await storySetup({ 'gen.txt': 'v1\n', 'keep.txt': 'k\n' });
    // What setup left: a new lockfile and a regenerated tracked file.
    sf.write('lock.json', 'setup\n');
    sf.write('gen.txt', 'v2\n');
    expect(await story.setAsideChanges()).toEqual(['gen.txt', 'lock.json']);
    expect(await story.dirtyPaths()).toEqual([]);
    sf.write('mine.txt', 'm\n');
    const first = await story.commitAll('work');
    expect(sf.git('show', '--name-only', '--format=', first ?? '').trim()).toBe('mine.txt');
    // Changed again by the coder: its version is the story's.
    sf.write('gen.txt', 'v3\n');
    expect(await story.dirtyPaths()).toEqual(['gen.txt']);
    const second = await story.commitAll('more');
    expect(sf.git('show', '--name-only', '--format=', second ?? '').trim()).toBe('gen.txt');
    // The epic has a lockfile of its own: the catch-up takes it, over setup's.
    ef.write('lock.json', 'epic\n');
    const epicSha = ef.commitAll('epic lockfile');
    expect((await story.catchUp(epicSha)).merged).toBe(true);
    expect(readFileSync(join(story.path, 'lock.json'), 'utf8')).toBe('epic\n');
    expect(readFileSync(join(story.path, 'gen.txt'), 'utf8')).toBe('v3\n');
    expect(await story.isClean()).toBe(true);
  });

  it('lists changed paths with status, mode and symlink target', async () => {
    const { story, sf, base } = await storySetup({
      'keep.txt': 'k\n',
      'edit.txt': 'e\n',
      'drop.txt': 'd\n',
      'run.sh': 'echo\n',
    });
    sf.write('edit.txt', 'edited\n');
    sf.git('rm', '-q', 'drop.txt');
    sf.write('dir/added.txt', 'a\n');
    symlinkSync('../outside/secret', join(story.path, 'link'));
    chmodSync(join(story.path, 'run.sh'), 0o755);
    sf.write('tool.sh', '#!/bin/sh\n');
    chmodSync(join(story.path, 'tool.sh'), 0o755);
    await story.commitAll('changes');
    const changes = await story.changedPaths(base);
    const byPath = Object.fromEntries(changes.map((c) => [c.path, c]));
    expect(Object.keys(byPath).sort()).toEqual([
      'dir/added.txt',
      'drop.txt',
      'edit.txt',
      'link',
      'run.sh',
      'tool.sh',
    ]);
    expect(byPath['dir/added.txt']).toEqual({
      path: 'dir/added.txt',
      status: 'added',
      mode: 'file',
    });
    expect(byPath['drop.txt']).toEqual({ path: 'drop.txt', status: 'deleted', mode: 'file' });
    expect(byPath['edit.txt']).toEqual({ path: 'edit.txt', status: 'modified', mode: 'file' });
    expect(byPath.link).toEqual({
      path: 'link',
      status: 'added',
      mode: 'symlink',
      symlinkTarget: '../outside/secret',
    });
    expect(byPath['run.sh']).toEqual({ path: 'run.sh', status: 'modified', mode: 'executable' });
    expect(byPath['tool.sh']).toEqual({ path: 'tool.sh', status: 'added', mode: 'executable' });
  });

  it('diffs against the merge base, so epic changes are not the story’s', async () => {
    const { story, sf, ef } = await storySetup();
    ef.write('epic.txt', 'e\n');
    ef.commitAll('epic moved');
    sf.write('story.txt', 's\n');
    await story.commitAll('story');
    expect((await story.changedPaths('epic/1')).map((c) => c.path)).toEqual(['story.txt']);
  });

  it('restores paths from a ref: changed back, added removed, deleted recreated', async () => {
    const { story, sf, base } = await storySetup({
      'owned/a.txt': 'a\n',
      'other/b.txt': 'b\n',
      'other/c.txt': 'c\n',
      'top.txt': 't\n',
    });
    sf.write('owned/a.txt', 'mine\n');
    sf.write('other/b.txt', 'stray edit\n');
    sf.write('other/new.txt', 'stray add\n');
    sf.git('rm', '-q', 'top.txt');
    sf.write('stray.txt', 'new\n');
    await story.commitAll('work');
    await story.restorePaths(base, ['other', 'top.txt', 'stray.txt']);
    await story.commitAll('put paths back');
    expect((await story.changedPaths(base)).map((c) => c.path)).toEqual(['owned/a.txt']);
    expect(readFileSync(join(story.path, 'other/b.txt'), 'utf8')).toBe('b\n');
    expect(existsSync(join(story.path, 'other/new.txt'))).toBe(false);
    expect(readFileSync(join(story.path, 'top.txt'), 'utf8')).toBe('t\n');
    await expect(story.restorePaths(base, ['../x'])).rejects.toThrow(
      'refusing to restore an unsafe path',
    );
  });

  it('restores only what it is asked to: edits elsewhere stay, an edit on disk of a restored file goes', async () => {
    const { story, sf, base } = await storySetup({
      'keep.txt': 'k\n',
      'back.txt': 'b\n',
      'x/y.txt': 'y\n',
    });
    sf.write('back.txt', 'story\n');
    // The story turned a folder into a file.
    sf.git('rm', '-q', 'x/y.txt');
    sf.write('x', 'a file now\n');
    await story.commitAll('work');
    // Left on disk by a gate, not committed.
    sf.write('keep.txt', 'edited by a gate\n');
    sf.write('back.txt', 'edited again\n');
    await story.restorePaths(base, ['back.txt', 'x']);
    expect(readFileSync(join(story.path, 'back.txt'), 'utf8')).toBe('b\n');
    expect(readFileSync(join(story.path, 'x/y.txt'), 'utf8')).toBe('y\n');
    expect(readFileSync(join(story.path, 'keep.txt'), 'utf8')).toBe('edited by a gate\n');
    await story.commitAll('restored');
    expect((await story.changedPaths(base)).map((c) => c.path)).toEqual(['keep.txt']);
  });

  it('restores paths with characters beyond ASCII among others', async () => {
    const names = ['a.txt', 'ünï/x.txt', '😀.txt', '\uE000.txt', 'z/ß.txt', 'a b/c.txt'];
    const { story, sf, base } = await storySetup(
      Object.fromEntries(names.map((n) => [n, `${n}\n`])),
    );
    for (const n of names) sf.write(n, 'changed\n');
    sf.write('😀/new.txt', 'new\n');
    await story.commitAll('work');
    await story.restorePaths(base, ['😀.txt', '\uE000.txt', 'ünï', '😀']);
    await story.commitAll('restore');
    expect((await story.changedPaths(base)).map((c) => c.path).sort()).toEqual(
      ['a b/c.txt', 'a.txt', 'z/ß.txt'].sort(),
    );
    expect(readFileSync(join(story.path, '😀.txt'), 'utf8')).toBe('😀.txt\n');
    expect(existsSync(join(story.path, '😀', 'new.txt'))).toBe(false);
  });

  it('never writes through a symlink the story put where a restored folder was', async () => {
    const { story, sf, base } = await storySetup({ 'other/b.txt': 'b\n', 'lnk/x.txt': 'x\n' });
    const outside = mkdtempSync(join(tmpdir(), 'epicflow-outside-'));
    try {
      sf.git('rm', '-q', '-r', 'other', 'lnk');
      symlinkSync(outside, join(story.path, 'other'));
      symlinkSync(outside, join(story.path, 'lnk'));
      await story.commitAll('folders become links out of the tree');
      // The folder itself, and a file under the other link.
      await story.restorePaths(base, ['other', 'lnk/x.txt']);
      expect(readdirSync(outside)).toEqual([]);
      expect(lstatSync(join(story.path, 'other')).isDirectory()).toBe(true);
      expect(readFileSync(join(story.path, 'other/b.txt'), 'utf8')).toBe('b\n');
      expect(lstatSync(join(story.path, 'lnk')).isDirectory()).toBe(true);
      expect(readFileSync(join(story.path, 'lnk/x.txt'), 'utf8')).toBe('x\n');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('merges with --no-ff and trailers visible in git log', async () => {
    const { epic, sf, story, ef } = await storySetup();
    sf.write('feature.txt', 'f\n');
    await story.commitAll('feature');
    const message =
      'Merge story s: Add a feature\n\nEpicflow-Story: s\nEpicflow-Executor: codex → claude\n';
    const r = await epic.mergeNoFf('story/1/s', message);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.sha).toBe(await epic.head());
    expect(ef.git('rev-list', '--parents', '-n', '1', 'HEAD').trim().split(' ')).toHaveLength(3);
    expect(ef.git('log', '-1', '--format=%(trailers:key=Epicflow-Story,valueonly)').trim()).toBe(
      's',
    );
    expect(ef.git('log', '-1', '--format=%(trailers:key=Epicflow-Executor,valueonly)').trim()).toBe(
      'codex → claude',
    );
    expect(await epic.mergeNoFf('story/1/s', message)).toEqual({ ok: true, sha: r.sha });
  });

  it('reports a merge conflict with its paths and leaves the tree clean', async () => {
    const { epic, ef, sf, story } = await storySetup({ 'c.txt': 'base\n' });
    ef.write('c.txt', 'epic\n');
    const before = ef.commitAll('epic edit');
    sf.write('c.txt', 'story\n');
    await story.commitAll('story edit');
    const r = await epic.mergeNoFf('story/1/s', 'merge s');
    expect(r).toEqual({ ok: false, conflicts: ['c.txt'] });
    expect(await epic.head()).toBe(before);
    expect(await epic.isClean()).toBe(true);
    expect(readFileSync(join(epic.path, 'c.txt'), 'utf8')).toBe('epic\n');
  });

  it('merges keeping its own side of every conflict, a deletion against a change too, and the rest of the branch', async () => {
    const { epic, ef, sf } = await storySetup({ 'c.txt': 'one\n', 'gone.txt': 'g\n' });
    ef.write('c.txt', 'epic\n');
    ef.git('rm', '-q', 'gone.txt');
    const before = ef.commitAll('epic side');
    sf.write('c.txt', 'story\n');
    sf.write('gone.txt', 'story changed it\n');
    sf.write('new.txt', 'n\n');
    sf.commitAll('story side');
    const sha = await epic.mergeKeepingOurs('story/1/s', 'merge s');
    expect(sha).toBe(await epic.head());
    expect(ef.git('rev-parse', `${sha}^1`).trim()).toBe(before);
    expect(readFileSync(join(epic.path, 'c.txt'), 'utf8')).toBe('epic\n');
    expect(existsSync(join(epic.path, 'gone.txt'))).toBe(false);
    expect(readFileSync(join(epic.path, 'new.txt'), 'utf8')).toBe('n\n');
    expect(await epic.isClean()).toBe(true);
  });

  it('resets hard and removes untracked files', async () => {
    const { epic, ef, base } = await storySetup();
    ef.write('x.txt', 'x\n');
    ef.commitAll('x');
    ef.write('junk/out.log', 'junk\n');
    ef.write('README.md', 'dirty\n');
    await epic.resetHard(base);
    expect(await epic.head()).toBe(base);
    expect(await epic.isClean()).toBe(true);
    expect(existsSync(join(epic.path, 'x.txt'))).toBe(false);
  });
});

describe('repository config', () => {
  it('does not change what epicflow parses', async () => {
    const f = repo({ 'a b.txt': 'x\n' });
    f.git('config', 'color.ui', 'always');
    f.git('config', 'core.quotePath', 'true');
    f.git('config', 'status.short', 'true');
    const git = await Git.open(f.dir, IDENTITY);
    const base = await git.defaultBase();
    await git.createBranch('story/1/s', base);
    await git.addWorktree(wtPath(f, 's'), 'story/1/s');
    const story = git.worktree(wtPath(f, 's'));
    writeFileSync(join(story.path, 'a b.txt'), 'y\n');
    writeFileSync(join(story.path, 'ünï.txt'), 'u\n');
    expect((await git.dirtyPaths(story.path)).sort()).toEqual(['a b.txt', 'ünï.txt']);
    await story.commitAll('work');
    expect((await story.changedPaths(base)).map((c) => c.path).sort()).toEqual([
      'a b.txt',
      'ünï.txt',
    ]);
  });
});

describe('hooks', () => {
  it('never runs hooks planted in the repository', async () => {
    const f = repo({ 'c.txt': 'base\n' });
    const marker = join(dirname(f.dir), 'hook-ran');
    const hook = `#!/bin/sh\necho "$0" >> '${marker}'\n`;
    const plant = (dir: string): void => {
      mkdirSync(dir, { recursive: true });
      for (const name of [
        'pre-commit',
        'commit-msg',
        'post-commit',
        'post-merge',
        'post-checkout',
        'pre-merge-commit',
        'reference-transaction',
      ]) {
        writeFileSync(join(dir, name), hook);
        chmodSync(join(dir, name), 0o755);
      }
    };
    plant(join(f.dir, '.git', 'hooks'));
    // An agent may also point core.hooksPath somewhere else.
    plant(join(f.dir, 'evil-hooks'));
    f.git('config', 'core.hooksPath', join(f.dir, 'evil-hooks'));

    const git = await Git.open(f.dir, IDENTITY);
    const base = await git.defaultBase();
    await git.createBranch('epic/1', base);
    await git.createBranch('story/1/s', base);
    await git.addWorktree(wtPath(f, 'epic'), 'epic/1');
    await git.addWorktree(wtPath(f, 's'), 'story/1/s');
    const story = git.worktree(wtPath(f, 's'));
    const epic = git.worktree(wtPath(f, 'epic'));
    writeFileSync(join(story.path, 's.txt'), 's\n');
    await story.commitAll('story');
    writeFileSync(join(epic.path, 'e.txt'), 'e\n');
    const epicSha = await epic.commitAll('epic');
    await story.catchUp(epicSha as string);
    const merged = await epic.mergeNoFf('story/1/s', 'merge s');
    expect(merged.ok).toBe(true);
    await git.updateRef('epic/2', base, null);
    await epic.resetHard(base);
    await git.removeWorktree(story.path);
    expect(existsSync(marker)).toBe(false);
  });
});
