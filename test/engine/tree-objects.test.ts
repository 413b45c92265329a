/**
 * epicflow turns the agent's tree into a commit by reading the files itself (never following
 * a link) and writing git objects: no git command of epicflow's stages, diffs or reads the
 * status of the tree, so nothing the agent plants there (a nested repository's filter or
 * fsmonitor, a `.git` folder of its own) runs as epicflow. A nested repository is left out of
 * the commit with a note, never recorded as a gitlink; links are committed as links; ignored
 * files are left out.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** Runs one story whose one turn runs `sh` and writes `write`; gates pass. */
async function oneTurn(
  sh: string[],
  write: Record<string, string>,
  extra: { symlink?: Record<string, string> } = {},
): Promise<Awaited<ReturnType<typeof run>>> {
  const coder = scriptedCoder(repo, 'coder', {
    s: { '1': { sh, write, ...extra }, '*': {} },
  });
  repo.write(
    'epicflow.yml',
    configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'], fixRounds: 1 }),
  );
  repo.commit('config');
  return run(repo, planMarkdown([{ id: 's', owns: ['src/'] }]));
}

describe('the agent tree turned into a commit', () => {
  it('never runs the filter or fsmonitor of a repository nested in the tree, and leaves it out', async () => {
    repo = makeRepo({ 'README.md': 'x\n', 'src/keep.txt': 'keep\n' });
    const marker = join(repo.tmp, 'ran-as-epicflow');
    const hook = `sh -c 'env >> ${marker}; cat'`;
    // Configured from the start, and never committed: the nested repository has no HEAD.
    const nest = [
      'mkdir -p src/sub && cd src/sub && git init -q',
      "echo '* filter=x' > .gitattributes",
      'echo one > f.txt',
      `git config filter.x.clean "${hook}"`,
      `git config filter.x.smudge "${hook}"`,
      'git config filter.x.required true',
      `git config core.fsmonitor "${hook}"`,
    ].join(' && ');
    const result = await run2(nest);
    expect(existsSync(marker)).toBe(false);
    const tree = git(repo.dir, 'ls-tree', '-r', '--full-tree', 'epic/epic');
    expect(tree.split('\n').filter((l) => l.startsWith('160000'))).toEqual([]);
    expect(tree).not.toContain('src/sub');
    // The rest of the turn is the story's, merged; the nested repository is named in a note.
    expect(tree).toContain('src/a.txt');
    expect(result.code).toBe(0);
    expect(record(repo, 's')).toMatchObject({ status: 'done' });
    expect(result.stdout).toContain('left out src/sub: a repository nested in the tree');
  });

  it('never reads a .git folder or config the agent plants at the top of its tree', async () => {
    repo = makeRepo({ 'README.md': 'x\n', 'src/keep.txt': 'keep\n' });
    const marker = join(repo.tmp, 'ran-as-epicflow');
    const hook = `sh -c 'env >> ${marker}; cat'`;
    // The tree's `.git` file (it names the worktree's admin folder) becomes a repository of
    // the agent's with an fsmonitor and a filter every file is under.
    const plant = [
      'rm -f .git && git init -q . && echo "* filter=x" > src/.gitattributes',
      `git config filter.x.clean "${hook}"`,
      `git config core.fsmonitor "${hook}"`,
    ].join(' && ');
    const result = await run2(plant);
    expect(existsSync(marker)).toBe(false);
    expect(result.code).toBe(0);
    const tree = git(repo.dir, 'ls-tree', '-r', '--full-tree', '--name-only', 'epic/epic');
    expect(tree.split('\n')).toEqual(expect.arrayContaining(['src/.gitattributes', 'src/a.txt']));
    expect(tree).not.toContain('.git/');
  });

  it('commits a link as a link, never what it points at, and leaves ignored files out', async () => {
    repo = makeRepo({ 'README.md': 'x\n', '.gitignore': 'src/build/\n*.log\n' });
    const result = await oneTurn(
      ['mkdir -p src/build && echo out > src/build/o.js'],
      { 'src/a.txt': 'a\n', 'src/run.log': 'noise\n' },
      { symlink: { 'src/readme': '../README.md', 'src/to-a': 'a.txt' } },
    );
    expect(result.code).toBe(0);
    const ls = git(repo.dir, 'ls-tree', '-r', '--full-tree', 'epic/epic');
    const entry = (path: string): string | undefined =>
      ls.split('\n').find((l) => l.endsWith(`\t${path}`));
    expect(entry('src/readme')).toMatch(/^120000 blob /);
    expect(git(repo.dir, 'cat-file', 'blob', 'epic/epic:src/readme')).toBe('../README.md');
    expect(entry('src/to-a')).toMatch(/^120000 blob /);
    expect(entry('src/a.txt')).toMatch(/^100644 blob /);
    expect(entry('src/run.log')).toBeUndefined();
    expect(entry('src/build/o.js')).toBeUndefined();
  });
});

/** One turn that runs `sh` (in the tree) and writes `src/a.txt`. */
function run2(sh: string): ReturnType<typeof run> {
  return oneTurn([sh], { 'src/a.txt': 'a\n' });
}
