import { afterEach, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  showFile,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/**
 * A shell barrier: touch our flag, then wait for the other's — at most 20 s, well inside
 * the test's time, so stories that did not run side by side fail the assertions (which
 * then show the run's events) instead of the test timing out.
 */
function barrier(dir: string, mine: string, other: string): string {
  const a = join(dir, mine);
  const b = join(dir, other);
  // A minute at most: on a busy machine the other story may start late.
  return `touch '${a}'; i=0; while [ ! -f '${b}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; [ -f '${b}' ]`;
}

describe('parallel stories', () => {
  it('runs a diamond: both middle stories at once, the last after both merged', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      top: { '*': { write: { 'src/top.txt': 'top\n' } } },
      left: { '*': { sh: [barrier(repo.tmp, 'left', 'right')], write: { 'src/left.txt': 'l\n' } } },
      right: {
        '*': { sh: [barrier(repo.tmp, 'right', 'left')], write: { 'src/right.txt': 'r\n' } },
      },
      bottom: {
        '*': {
          sh: ['test -f src/left.txt && test -f src/right.txt'],
          write: { 'src/bottom.txt': 'b\n' },
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder, slots: 2 }],
        gates: ['true'],
        concurrency: 2,
      }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'top', owns: ['src/top.txt'] },
        { id: 'left', owns: ['src/left.txt'], dependsOn: ['top'] },
        { id: 'right', owns: ['src/right.txt'], dependsOn: ['top'] },
        { id: 'bottom', owns: ['src/bottom.txt'], dependsOn: ['left', 'right'] },
      ]),
      { worktrees: 'trees' },
    );
    // With the run's events, should it fail.
    expect(result).toMatchObject({ stderr: '', code: 0 });
    const merges = epicMerges(repo);
    expect(merges[0]).toBe('Merge story top: Story top');
    expect(merges.slice(1, 3).sort()).toEqual([
      'Merge story left: Story left',
      'Merge story right: Story right',
    ]);
    expect(merges[3]).toBe('Merge story bottom: Story bottom');
    expect(showFile(repo, 'epic/epic', 'src/bottom.txt')).toBe('b');
    // --worktrees (relative to the current directory) holds one worktree per story.
    expect(git(join(repo.tmp, 'trees', 'left'), 'branch', '--show-current')).toBe(
      'story/epic/left',
    );
  }, 360_000);

  it('undoes a merge whose epic gates newly fail, though each story was green alone (no merge revision)', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      one: { '*': { sh: [barrier(repo.tmp, 'one', 'two')], write: { 'src/one.txt': 'x\n' } } },
      two: { '*': { sh: [barrier(repo.tmp, 'two', 'one')], write: { 'src/two.txt': 'x\n' } } },
    });
    const gate =
      "if [ -f src/one.txt ] && [ -f src/two.txt ]; then echo 'not ok 1 - one and two clash'; exit 1; fi";
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder, slots: 2 }],
        gates: [gate],
        concurrency: 2,
        extra: 'mergeRevisions: 0',
      }),
    );
    repo.commit('config');
    const before = git(repo.dir, 'rev-parse', 'HEAD');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'one', owns: ['src/one.txt'] },
        { id: 'two', owns: ['src/two.txt'] },
      ]),
    );
    expect(result).toMatchObject({ code: 1 });
    const merges = epicMerges(repo);
    expect({ merges, events: result.stdout }).toMatchObject({ merges: [expect.any(String)] });
    const loser = merges[0]?.includes('one') ? 'two' : 'one';
    expect(record(repo, loser)).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining(
        'epic gates failed after merging; merge undone: ',
      ) as unknown as string,
    });
    expect(String(record(repo, loser).reason)).toContain('one and two clash');
    // The epic branch holds exactly the one good merge on top of the start.
    expect(git(repo.dir, 'rev-parse', 'epic/epic^1')).toBe(before);
  }, 360_000);

  it('gives a story whose merge turned the epic head red one revision on the epic head, and it merges', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // Two waits until one is on the epic branch, so its merge comes second; it writes what
    // clashes with one, unless one is in its tree (as after catching up).
    const waitForOne = `i=0; until git -C '${repo.dir}' cat-file -e epic/epic:src/one.txt 2>/dev/null || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done`;
    const coder = scriptedCoder(repo, 'coder', {
      one: { '*': { write: { 'src/one.txt': 'one\n' } } },
      two: {
        '1': { sh: [waitForOne, 'mkdir -p src; echo clash > src/two.txt'] },
        '*': {
          sh: ['if [ -f src/one.txt ]; then echo knows-one; else echo clash; fi > src/two.txt'],
        },
      },
    });
    const gate =
      "if [ -f src/one.txt ] && grep -qs clash src/two.txt; then echo 'not ok 1 - two clashes with one'; exit 1; fi";
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder, slots: 2 }],
        gates: [gate],
        concurrency: 2,
        fixRounds: 0,
      }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'one', owns: ['src/one.txt'] },
        { id: 'two', owns: ['src/two.txt'] },
      ]),
    );
    expect(result.code).toBe(0);
    expect(epicMerges(repo)).toEqual(['Merge story one: Story one', 'Merge story two: Story two']);
    expect(showFile(repo, 'epic/epic', 'src/two.txt')).toBe('knows-one');
    const revision =
      'the merged epic head failed its gates (merge undone): merge revision 1 of 1, on the epic head';
    expect(record(repo, 'two').notes).toContain(revision);
    expect(result.stdout).toContain(`[two] ${revision}`);
    // The revision turn was told the red lines.
    const turns = prompts(repo, 'coder').filter((p) => p.story === 'two');
    expect(turns).toHaveLength(2);
    expect(turns[1]?.prompt).toContain('two clashes with one');
  }, 360_000);
});
