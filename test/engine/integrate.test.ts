import { afterEach, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { FileStateStore } from '../../src/adapters/state/file-store.js';
import { DEFAULT_CONFIG } from '../../src/core/config/schema.js';
import type { Plan, Story } from '../../src/core/model.js';
import type { EngineEvent } from '../../src/engine/ports.js';
import { integrate } from '../../src/engine/integrate.js';
import { shellGates } from '../../src/adapters/process/shell-gates.js';
import { gitPort } from '../../src/adapters/git/port.js';
import { openEpic } from '../../src/engine/run-epic.js';
import { StoryStop } from '../../src/engine/stop.js';
import { Git } from '../../src/adapters/git/index.js';
import { git, makeRepo, type TestRepo } from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const story: Story = {
  id: 's',
  title: 'Story s',
  description: 'x',
  owns: ['shared.txt'],
  reads: [],
  dependsOn: [],
  provides: [],
  acceptance: [],
  testsChange: false,
};
const plan: Plan = { stories: [story], waves: [['s']], hashes: { s: 'h' } };

async function epicContext(gates = ['true']): Promise<Awaited<ReturnType<typeof openEpic>>> {
  const events: EngineEvent[] = [];
  const g = await Git.open(repo.dir);
  return openEpic(
    {
      epic: 'e',
      epicBranch: 'epic/e',
      plan,
      config: { ...DEFAULT_CONFIG, gates },
      configPaths: [],
      answerKey: new Uint8Array(32),
      worktreesDir: join(repo.tmp, 'trees'),
      homesDir: join(repo.tmp, 'homes'),
      executorEnv: {},
    },
    {
      git: gitPort(g),
      state: new FileStateStore(join(repo.tmp, 'state')),
      gates: shellGates(process.env),
      executors: () => {
        throw new Error('no executor in this test');
      },
      clock: { now: () => new Date(), sleep: async () => undefined },
      events: { emit: (e) => events.push(e) },
    },
  );
}

describe('integrate', () => {
  /** A story commit and an epic head that change the same line of shared.txt two ways. */
  async function lateConflict(gates?: string[]) {
    repo = makeRepo({ 'shared.txt': 'one\n' });
    const ctx = await epicContext(gates);
    // The story changes the line one way on its branch, and adds a file of its own…
    git(repo.dir, 'branch', 'story/e/s', 'epic/e');
    const storyTree = join(repo.tmp, 'story');
    git(repo.dir, 'worktree', 'add', '-q', storyTree, 'story/e/s');
    repo.write('../story/shared.txt', 'story\n');
    repo.write('../story/own.txt', 'mine\n');
    git(storyTree, 'add', '-A');
    git(storyTree, 'commit', '-qm', 'story side');
    // …and a story merged meanwhile moved the epic head the other way.
    const main = join(repo.tmp, 'other');
    git(repo.dir, 'worktree', 'add', '-q', '--detach', main, 'epic/e');
    repo.write('../other/shared.txt', 'epic\n');
    git(main, 'commit', '-qam', 'epic side');
    const moved = git(main, 'rev-parse', 'HEAD');
    git(repo.dir, 'update-ref', 'refs/heads/epic/e', moved);
    ctx.epicHead = moved;
    return { ctx, moved, commit: git(storyTree, 'rev-parse', 'HEAD') };
  }

  it("absorbs a late conflict: the epic's side of it is kept, the rest of the story merges, and it says so", async () => {
    const { ctx, moved, commit } = await lateConflict();
    const notes: string[] = [];
    const merged = await integrate(ctx, {
      story,
      branch: 'story/e/s',
      commit,
      chain: ['bot'],
      notes,
    });
    expect(notes).toEqual(["conflicts with epic/e in shared.txt: the epic's side kept"]);
    expect(git(repo.dir, 'rev-parse', 'epic/e')).toBe(merged);
    expect(git(repo.dir, 'rev-parse', `${merged}^1`)).toBe(moved);
    expect(git(repo.dir, 'rev-parse', `${merged}^2`)).toBe(commit);
    expect(git(repo.dir, 'show', 'epic/e:shared.txt')).toBe('epic');
    expect(git(repo.dir, 'show', 'epic/e:own.txt')).toBe('mine');
    expect(git(join(repo.tmp, 'trees', '_epic'), 'status', '--porcelain')).toBe('');
  });

  it('the merged tree of an absorbed conflict is gated: red, the merge is undone and the epic branch stays', async () => {
    // Green on the epic head; with the story's file, only the story's side of the line passes.
    const { ctx, moved, commit } = await lateConflict([
      'if [ -f own.txt ]; then grep -q story shared.txt; fi',
    ]);
    const attempt = integrate(ctx, { story, branch: 'story/e/s', commit, chain: ['bot'] });
    await expect(attempt).rejects.toBeInstanceOf(StoryStop);
    await expect(attempt).rejects.toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^epic gates failed after merging; merge undone: /),
    });
    expect(git(repo.dir, 'rev-parse', 'epic/e')).toBe(moved);
    expect(git(join(repo.tmp, 'trees', '_epic'), 'status', '--porcelain')).toBe('');
    expect(git(join(repo.tmp, 'trees', '_epic'), 'rev-parse', 'HEAD')).toBe(moved);
  });

  it('merges only the commit that was checked: a story branch that moved since fails the story', async () => {
    repo = makeRepo({ 'shared.txt': 'one\n' });
    const ctx = await epicContext();
    git(repo.dir, 'branch', 'story/e/s', ctx.epicHead);
    const storyTree = join(repo.tmp, 'story');
    git(repo.dir, 'worktree', 'add', '-q', storyTree, 'story/e/s');
    repo.write('../story/shared.txt', 'checked\n');
    git(storyTree, 'commit', '-qam', 'the checked work');
    const checked = git(storyTree, 'rev-parse', 'HEAD');
    // After the check, something commits on the branch (a process the agent left behind).
    repo.write('../story/OUTSIDE.md', 'pwned\n');
    git(storyTree, 'add', '-A');
    git(storyTree, 'commit', '-qm', 'unchecked');
    const moved = git(storyTree, 'rev-parse', 'HEAD');
    const before = ctx.epicHead;

    const attempt = integrate(ctx, { story, branch: 'story/e/s', commit: checked, chain: ['bot'] });
    await expect(attempt).rejects.toMatchObject({
      status: 'failed',
      reason: `story/e/s moved after it was checked (checked ${checked.slice(0, 12)}, now ${moved.slice(0, 12)}): not merged`,
    });
    expect(git(repo.dir, 'rev-parse', 'epic/e')).toBe(before);
  });
});
