import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
import { bundledEntry } from '../support/bundled-entry.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..');
// The crash child bundled once for the whole run (test/support/bundled-entry.ts): started
// with `--import tsx` it would transpile the sources again at each start.
let child: string;
beforeAll(async () => {
  child = await bundledEntry(join(here, 'support', 'crash-child.ts'));
});

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** Runs `epicflow run` in a child killed with SIGKILL at `point` of story a. */
function crashAt(point: string, file: string): void {
  const crashed = spawnSync(process.execPath, [child, file, repo.dir], {
    cwd: projectRoot,
    env: { ...process.env, EPICFLOW_TEST_CRASH_AT: `${point}:a` },
    encoding: 'utf8',
  });
  expect(crashed.signal).toBe('SIGKILL');
}

// That a rerun after a crash at any point from the commit on pays for no coder turn again
// is test/engine/crash.test.ts's (a's turns counted at each point).
describe('a resumed story does not pay for its coder turn again', () => {
  it('work committed but failing its gates gets a fix round with the failure, not a blind turn', async () => {
    repo = makeRepo({ 'README.md': 'original\n' });
    // The first turn writes the wrong text; a turn that finds it there fixes it.
    const coder = scriptedCoder(repo, 'coder', {
      a: {
        '*': {
          sh: [
            'mkdir -p src; if [ -f src/a.txt ]; then t=a; else t=wrong; fi; echo $t > src/a.txt',
          ],
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['test ! -f src/a.txt || grep -qx a src/a.txt'],
        fixRounds: 2,
      }),
    );
    repo.commit('config');
    const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
    const file = join(repo.tmp, 'epic.md');
    writeFileSync(file, plan);

    crashAt('after-commit', file);
    const rerun = await run(repo, plan);
    expect(rerun.code).toBe(0);
    const turns = prompts(repo, 'coder');
    // The crashed turn, then one fix round that quotes the failing gate.
    expect(turns).toHaveLength(2);
    expect(turns[1]?.prompt).toContain('## The gates failed');
    expect(epicMerges(repo)).toEqual(['Merge story a: Story a']);
    expect(showFile(repo, 'epic/epic', 'src/a.txt')).toBe('a');
  });
});

describe('a story resumed under another worktree root', () => {
  it('leaves the old root and merges from the new one (the repository moved, or --worktrees changed)', async () => {
    repo = makeRepo({ 'README.md': 'original\n' });
    // Red until the test says otherwise: the first run leaves the story failed, its tree kept.
    const green = join(repo.tmp, 'green');
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: [`test -f '${green}' || ! test -f src/a.txt`],
        fixRounds: 0,
      }),
    );
    repo.commit('config');
    const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
    const first = await run(repo, plan, { worktrees: 'old-root' });
    expect(first.code).toBe(1);
    expect(git(repo.dir, 'worktree', 'list', '--porcelain')).toContain(
      `worktree ${join(repo.tmp, 'old-root', 'a')}\n`,
    );

    writeFileSync(green, '');
    const rerun = await run(repo, plan, { worktrees: 'new-root' });
    expect({ code: rerun.code, out: rerun.stdout }).toMatchObject({ code: 0 });
    expect(epicMerges(repo)).toEqual(['Merge story a: Story a']);
    const trees = git(repo.dir, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .map((l) => l.slice('worktree '.length));
    expect(trees).toContain(join(repo.tmp, 'new-root', 'a'));
    expect(trees).not.toContain(join(repo.tmp, 'old-root', 'a'));
    expect(record(repo, 'a')).toMatchObject({ status: 'done' });
  });
});
