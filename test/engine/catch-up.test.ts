/**
 * A story judged after other stories merged takes the epic head first (epic side wins,
 * as at its start), is checked again on it, and only then read by the judge: a clash with
 * what merged meanwhile goes back to its coder before any judge is paid or merge undone.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLEARED_VERDICT,
  configYaml,
  epicMerges,
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

describe('catching up before the judge', () => {
  it('checks a story again on the epic head others moved, and the judge reads it there', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // Two's first turn ends only once one is merged, so one moved the epic head under it.
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
    const saw = join(repo.tmp, 'judge-saw');
    const judge = scriptedCoder(repo, 'reviewer', {
      '*': {
        '*': {
          sh: [
            `if [ -f src/one.txt ]; then echo "$EPICFLOW_STORY saw one"; else echo "$EPICFLOW_STORY saw no one"; fi >> '${saw}'`,
          ],
          stdout: CLEARED_VERDICT,
        },
      },
    });
    const gate =
      "if [ -f src/one.txt ] && grep -qs clash src/two.txt; then echo 'not ok 1 - two clashes with one'; exit 1; fi";
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'bot', command: coder, slots: 2 },
          { id: 'reviewer', command: judge, roles: ['judge'], slots: 2 },
        ],
        gates: [gate],
        concurrency: 2,
        fixRounds: 0,
        extra: 'judge: { executor: reviewer, rounds: 1 }',
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
    expect({ code: result.code, out: result.stdout }).toMatchObject({ code: 0 });
    expect(epicMerges(repo)).toEqual(['Merge story one: Story one', 'Merge story two: Story two']);
    expect(showFile(repo, 'epic/epic', 'src/two.txt')).toBe('knows-one');
    // The clash went back to the coder before the judge: no merge was undone.
    const revision = 'the gates failed after taking the epic head: merge revision 1 of 1';
    expect(record(repo, 'two').notes).toContain(revision);
    expect(result.stdout).toContain(
      '[two] took the epic head before the judge (stories merged meanwhile): checking again',
    );
    expect(result.stdout).not.toContain('merge undone');
    const turns = prompts(repo, 'coder').filter((p) => p.story === 'two');
    expect(turns).toHaveLength(2);
    expect(turns[1]?.prompt).toContain('two clashes with one');
    // One judge call for two, on a tree that holds what one merged.
    expect(prompts(repo, 'reviewer').filter((p) => p.story === 'two')).toHaveLength(1);
    expect(readFileSync(saw, 'utf8')).toContain('two saw one');
  }, 360_000);
});
