import { afterEach, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import {
  buildLandedMessage,
  buildLandMessage,
  buildMergeMessage,
} from '../../../src/core/merge-message.js';
import { readMergedStories } from '../../../src/adapters/git/merged-stories.js';
import { fixtureIn, IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

describe('the landing messages', () => {
  it('names the branch brought in and who resolved it, or the epic landed', () => {
    expect(buildLandMessage({ branch: 'main', epicBranch: 'epic/7', chain: [] })).toBe(
      'Merge main into epic/7\n\nEpicflow-Land: main\n',
    );
    expect(buildLandMessage({ branch: 'main', epicBranch: 'epic/7', chain: ['a', 'b'] })).toBe(
      'Merge main into epic/7\n\nEpicflow-Land: main\nEpicflow-Executor: a → b\n',
    );
    expect(
      buildLandedMessage({
        epic: '7',
        epicBranch: 'epic/7',
        into: 'main',
        title: 'Shop\nEpicflow-Epic: x',
      }),
    ).toBe('Merge epic/7 into main: Shop Epicflow-Epic: x\n\nEpicflow-Epic: 7\n');
    expect(buildLandedMessage({ epic: '7', epicBranch: 'epic/7', into: 'main', title: null })).toBe(
      'Merge epic/7 into main\n\nEpicflow-Epic: 7\n',
    );
  });
});

describe('buildMergeMessage', () => {
  it('puts the story and the executor chain in trailers', () => {
    expect(
      buildMergeMessage({ story: 'api', title: 'Add the API', chain: ['codex', 'claude'] }),
    ).toBe(
      'Merge story api: Add the API\n\nEpicflow-Story: api\nEpicflow-Executor: codex → claude\n',
    );
    expect(buildMergeMessage({ story: 'api', title: 'x', chain: 'aider' })).toBe(
      'Merge story api: x\n\nEpicflow-Story: api\nEpicflow-Executor: aider\n',
    );
  });

  it('keeps a hostile title on one line so it cannot forge trailers', () => {
    const msg = buildMergeMessage({
      story: 'a',
      title: 'Title\n\nEpicflow-Story: other\r\n',
      chain: [],
    });
    expect(msg).toBe('Merge story a: Title Epicflow-Story: other\n\nEpicflow-Story: a\n');
  });
});

describe('readMergedStories', () => {
  it('derives merged stories from trailers on the first-parent history', async () => {
    const f = makeRepo();
    fixtures.push(f);
    const git = await Git.open(f.dir, IDENTITY);
    const base = await git.defaultBase();
    expect(await readMergedStories(git, 'epic/5')).toEqual(new Map());
    await git.createBranch('epic/5', base);
    const epicPath = join(dirname(f.dir), 'wt', 'epic');
    await git.addWorktree(epicPath, 'epic/5');
    const epic = git.worktree(epicPath);
    const shas: Record<string, string> = {};
    for (const id of ['alpha', 'beta', 'plain']) {
      await git.createBranch(`story/5/${id}`, base);
      const path = join(dirname(f.dir), 'wt', id);
      await git.addWorktree(path, `story/5/${id}`);
      writeFileSync(join(path, `${id}.txt`), `${id}\n`);
      await git.worktree(path).commitAll(`work on ${id}`);
      const message =
        id === 'plain'
          ? 'Merge without trailers'
          : buildMergeMessage({ story: id, title: id, chain: ['codex'] });
      const r = await epic.mergeNoFf(`story/5/${id}`, message);
      if (!r.ok) throw new Error('merge failed');
      shas[id] = r.sha;
    }
    // A trailer merge reached only through a second parent is not on the epic's own history.
    await git.createBranch('side', base);
    await git.createBranch('story/5/ghost', base);
    const sidePath = join(dirname(f.dir), 'wt', 'side');
    const ghostPath = join(dirname(f.dir), 'wt', 'ghost');
    await git.addWorktree(sidePath, 'side');
    await git.addWorktree(ghostPath, 'story/5/ghost');
    writeFileSync(join(ghostPath, 'ghost.txt'), 'g\n');
    await git.worktree(ghostPath).commitAll('ghost');
    const ghostMsg = buildMergeMessage({ story: 'ghost', title: 'g', chain: ['x'] });
    expect((await git.worktree(sidePath).mergeNoFf('story/5/ghost', ghostMsg)).ok).toBe(true);
    expect((await epic.mergeNoFf('side', 'Merge side')).ok).toBe(true);
    // A commit (not a merge) carrying the trailer is not a merge.
    writeFileSync(join(epicPath, 'direct.txt'), 'd\n');
    fixtureIn(epicPath).git('add', '-A');
    fixtureIn(epicPath).git('commit', '-q', '-m', 'direct\n\nEpicflow-Story: direct');
    const merged = await readMergedStories(git, 'epic/5');
    expect(merged).toEqual(
      new Map([
        ['beta', shas.beta],
        ['alpha', shas.alpha],
      ]),
    );
    // An undone merge is no longer merged.
    await epic.resetHard(shas.alpha as string);
    expect([...(await readMergedStories(git, 'refs/heads/epic/5')).keys()]).toEqual(['alpha']);
  });
});
