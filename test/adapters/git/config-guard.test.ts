import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { fixtureIn, IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

async function setUp(): Promise<{
  f: Fixture;
  git: Git;
  dotGit: string;
  story: ReturnType<Git['worktree']>;
  epic: ReturnType<Git['worktree']>;
  sf: Fixture;
  ef: Fixture;
  marker: string;
}> {
  const f = makeRepo();
  fixtures.push(f);
  const git = await Git.open(f.dir, IDENTITY);
  const base = await git.defaultBase();
  const wt = join(dirname(f.dir), 'wt');
  await git.createBranch('story/1/s', base);
  await git.addWorktree(join(wt, 's'), 'story/1/s');
  await git.addWorktree(join(wt, 'epic'), base);
  const story = git.worktree(join(wt, 's'));
  const epic = git.worktree(join(wt, 'epic'));
  return {
    f,
    git,
    dotGit: join(f.dir, '.git'),
    story,
    epic,
    sf: fixtureIn(story.path),
    ef: fixtureIn(epic.path),
    marker: join(dirname(f.dir), 'marker'),
  };
}

function bytes(path: string): Buffer | null {
  return existsSync(path) ? readFileSync(path) : null;
}

describe('the git configuration guard', () => {
  it('puts back every file that configures git, byte for byte, and names each', async () => {
    const { dotGit, story, sf, marker } = await setUp();
    const files = {
      config: join(dotGit, 'config'),
      worktreeConfig: join(dotGit, 'worktrees', 's', 'config.worktree'),
      attributes: join(dotGit, 'info', 'attributes'),
      exclude: join(dotGit, 'info', 'exclude'),
      gitFile: join(story.path, '.git'),
    };
    const before = Object.fromEntries(Object.entries(files).map(([k, p]) => [k, bytes(p)]));
    expect(before['worktreeConfig']).toBeNull();
    expect(before['attributes']).toBeNull();

    const snapshot = await story.snapshotGitConfig();
    sf.git('config', 'filter.evil.clean', `touch ${marker}; cat`);
    sf.git('config', 'http.proxy', 'http://127.0.0.1:9');
    sf.git('config', 'extensions.worktreeConfig', 'true');
    sf.git('config', '--worktree', 'core.sshCommand', `touch ${marker}`);
    writeFileSync(files.attributes, '* filter=evil\n');
    writeFileSync(files.exclude, '*.txt\n');
    writeFileSync(files.gitFile, `gitdir: ${join(dirname(dotGit), 'elsewhere')}\n`);

    expect(await story.restoreGitConfig(snapshot)).toEqual([
      '.git/config',
      '.git/worktrees/s/config.worktree',
      '.git/info/attributes',
      '.git/info/exclude',
      "the worktree's .git file",
    ]);
    for (const [k, p] of Object.entries(files)) expect([k, bytes(p)]).toEqual([k, before[k]]);
    // epicflow's next commands obey the configuration as it was.
    sf.write('new.txt', 'n\n');
    expect(await story.commitAll('work')).not.toBeNull();
    expect(sf.git('show', '--name-only', '--format=', 'HEAD').trim()).toBe('new.txt');
    expect(existsSync(marker)).toBe(false);
  });

  it('guards a main checkout too (the Action runs a story in its job checkout)', async () => {
    const { f, git, dotGit, marker } = await setUp();
    const checkout = git.worktree(f.dir);
    const before = readFileSync(join(dotGit, 'config'));
    const snapshot = await checkout.snapshotGitConfig();
    f.git('config', 'url.https://example.invalid/.insteadOf', 'https://github.com/');
    f.git('config', 'extensions.worktreeConfig', 'true');
    f.git('config', '--worktree', 'core.sshCommand', `touch ${marker}`);
    expect(await checkout.restoreGitConfig(snapshot)).toEqual([
      '.git/config',
      '.git/config.worktree',
    ]);
    expect(readFileSync(join(dotGit, 'config'))).toEqual(before);
    expect(existsSync(join(dotGit, 'config.worktree'))).toBe(false);
  });

  it('reports nothing when nothing changed, and trusts edits made between windows', async () => {
    const { dotGit, story, f } = await setUp();
    const config = join(dotGit, 'config');
    expect(await story.restoreGitConfig(await story.snapshotGitConfig())).toEqual([]);
    f.git('config', 'user.name', 'Someone');
    const edited = readFileSync(config);
    expect(await story.restoreGitConfig(await story.snapshotGitConfig())).toEqual([]);
    expect(readFileSync(config)).toEqual(edited);
  });

  it('replaces a symlink or FIFO without writing through it', async () => {
    const { dotGit, story, f } = await setUp();
    const outside = join(dirname(f.dir), 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'victim'), 'victim\n');
    writeFileSync(join(outside, 'exclude'), 'keep me\n');
    const config = join(dotGit, 'config');
    const info = join(dotGit, 'info');
    const configBefore = readFileSync(config);
    const excludeBefore = readFileSync(join(info, 'exclude'));

    const snapshot = await story.snapshotGitConfig();
    rmSync(config);
    symlinkSync(join(outside, 'victim'), config);
    rmSync(info, { recursive: true });
    symlinkSync(outside, info);
    execFileSync('mkfifo', [join(outside, 'attributes')]);

    expect(await story.restoreGitConfig(snapshot)).toEqual([
      '.git/config',
      '.git/info/attributes',
      '.git/info/exclude',
    ]);
    expect(lstatSync(config).isFile()).toBe(true);
    expect(readFileSync(config)).toEqual(configBefore);
    expect(lstatSync(info).isDirectory()).toBe(true);
    expect(readFileSync(join(info, 'exclude'))).toEqual(excludeBefore);
    expect(existsSync(join(info, 'attributes'))).toBe(false);
    // Nothing outside was written or removed.
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('victim\n');
    expect(readFileSync(join(outside, 'exclude'), 'utf8')).toBe('keep me\n');
    expect(lstatSync(join(outside, 'attributes')).isFIFO()).toBe(true);
  });

  it('while a window is open, every git command of the repository puts the files back first', async () => {
    const { dotGit, story, epic, ef, sf, marker } = await setUp();
    const config = join(dotGit, 'config');
    const before = readFileSync(config);
    const storyWindow = await story.snapshotGitConfig();
    // Another story's agent is running: an integration merge must not obey what it planted.
    sf.git('config', 'filter.evil.clean', `touch ${marker}; cat`);
    sf.git('config', 'filter.evil.smudge', `touch ${marker}; cat`);
    writeFileSync(join(dotGit, 'info', 'attributes'), '* filter=evil\n');
    const epicWindow = await epic.snapshotGitConfig();
    expect(readFileSync(config)).toEqual(before);
    sf.git('config', 'filter.evil.clean', `touch ${marker}; cat`);
    writeFileSync(join(dotGit, 'info', 'attributes'), '* filter=evil\n');
    ef.write('merged.txt', 'm\n');
    expect(await epic.commitAll('merge')).not.toBeNull();
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(config)).toEqual(before);
    // Either window's code may have done it: both hear of it.
    expect(await epic.restoreGitConfig(epicWindow)).toEqual([
      '.git/config',
      '.git/info/attributes',
    ]);
    expect(await story.restoreGitConfig(storyWindow)).toEqual([
      '.git/config',
      '.git/info/attributes',
    ]);
    expect(existsSync(join(dotGit, 'info', 'attributes'))).toBe(false);
  });
});
