/**
 * A gate whose failing lines change from run to run is asked again before a story is
 * charged: a flaky test on the story's tree, and a red base that does not hold still,
 * on the story's tree and on the merged tree.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/**
 * A gate that counts its runs (in a file outside the trees; `where` limits the count to
 * trees whose path matches) and prints the line `lines[n]` of run n (the last one after),
 * or passes where `lines[n]` is ''.
 */
function noisyGate(counter: string, lines: string[], where = '*'): string {
  const cases = lines
    .map((l, i) => `${i + 1}) ${l === '' ? 'exit 0' : `echo 'not ok 1 - ${l}'; exit 1`};;`)
    .join(' ');
  const last = lines.at(-1) ?? '';
  return [
    `case "$PWD" in ${where}) n=$(( $(cat ${counter} 2>/dev/null || echo 0) + 1 )); echo $n > ${counter};;`,
    `*) echo 'not ok 1 - ${lines[0]}'; exit 1;; esac;`,
    `case $n in ${cases} *) ${last === '' ? 'exit 0' : `echo 'not ok 1 - ${last}'; exit 1`};; esac`,
  ].join(' ');
}

describe('a gate that fails differently from run to run', () => {
  it('a flaky line on the story tree: it passes on a rerun, the story merges, and the gate is named flaky', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { write: { 'src/s.txt': 's\n' } } } });
    // Runs: 1 the base (green), 2 the story (a flaky failure), 3 its rerun (green).
    const gate = noisyGate(join(repo.tmp, 'runs'), ['', 'timing out', '']);
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: [gate], fixRounds: 0 }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src/s.txt'] }]));
    expect(result.code).toBe(0);
    expect(showFile(repo, 'epic/epic', 'src/s.txt')).toBe('s');
    const note = /^flaky: `.*` failed with new lines, then passed on a rerun$/;
    expect((record(repo, 's').notes as string[]).some((n) => note.test(n))).toBe(true);
    expect(readFileSync(join(stateDir(repo), 'report.md'), 'utf8')).toContain('flaky: `');
  });

  it('a red base that does not hold still: lines of a second base run are not the story’s', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { write: { 'src/s.txt': 's\n' } } } });
    // Runs: 1 the base (A), 2 and 3 the story (B twice), 4 the base again (B).
    const gate = noisyGate(join(repo.tmp, 'runs'), ['A', 'B', 'B', 'B']);
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: [gate], fixRounds: 0 }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src/s.txt'] }]));
    expect(result.code).toBe(0);
    expect(showFile(repo, 'epic/epic', 'src/s.txt')).toBe('s');
    expect(record(repo, 's').notes).toEqual(
      expect.arrayContaining([expect.stringMatching(/^unstable on the base: `/)]),
    );
    // The base's second run is named on the epic's lane.
    expect(result.stdout).toMatch(/epicflow: running `.*` on [0-9a-f]{12} again/);
  });

  it('on the merged tree too: a correct merge is not undone for the base’s noise', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const other = (mine: string, theirs: string): string =>
      `touch '${join(repo.tmp, mine)}'; i=0; while [ ! -f '${join(repo.tmp, theirs)}' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`;
    const coder = scriptedCoder(repo, 'coder', {
      one: { '*': { sh: [other('one', 'two')], write: { 'src/one.txt': '1\n' } } },
      two: { '*': { sh: [other('two', 'one')], write: { 'src/two.txt': '2\n' } } },
    });
    // Story checkouts always show A, as the base did. In the epic's checkouts (the base's and
    // the merges'), runs: 1 the base (A); the first merge is the checked tree (not gated); 2
    // and 3 the second merge (B twice), 4 the head again (B).
    const gate = noisyGate(join(repo.tmp, 'runs'), ['A', 'B', 'B', 'B'], '*_base|*_merged');
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
    expect(epicMerges(repo)).toHaveLength(2);
    expect(showFile(repo, 'epic/epic', 'src/one.txt')).toBe('1');
    expect(showFile(repo, 'epic/epic', 'src/two.txt')).toBe('2');
    const notes = [
      ...(record(repo, 'one').notes as string[]),
      ...(record(repo, 'two').notes as string[]),
    ];
    expect(notes).toEqual(
      expect.arrayContaining([expect.stringMatching(/^unstable on the base: `/)]),
    );
    expect(readFileSync(join(repo.tmp, 'runs'), 'utf8').trim()).toBe('4');
  });

  it('a gate red on the base that a story only inherited is listed in the report with the story, its failing tests named under it in the record and the report', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { write: { 'src/s.txt': 's\n' } } } });
    const gate = "printf 'ok 1 - fine\\nnot ok 2 - totals round half up\\n'; exit 1";
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: [gate], fixRounds: 0 }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src/s.txt'] }]));
    expect(result.code).toBe(0);
    // Said once, when the base is checked, before any story is judged against it.
    const said = result.stdout.split('\n').filter((l) => l.includes('fails on the base'));
    expect(said).toEqual([
      expect.stringMatching(
        /^epicflow: the gate `printf .*; exit 1` fails on the base [0-9a-f]{12} already \(not ok - totals round half up\): stories are charged only with failures of their own, and where it cannot run at all it checks nothing until that is fixed$/,
      ),
    ]);
    expect(record(repo, 's')).toMatchObject({
      status: 'done',
      inherited: [gate],
      inheritedLines: [{ command: gate, lines: ['not ok - totals round half up'] }],
    });
    const report = readFileSync(join(stateDir(repo), 'report.md'), 'utf8');
    expect(report).toContain('## Red on the base (tolerated)');
    expect(report).toContain(`- ${gate}: \`s\`\n  - not ok - totals round half up\n`);
    expect(JSON.parse(readFileSync(join(stateDir(repo), 'report.json'), 'utf8'))).toMatchObject({
      stories: [
        { id: 's', inheritedLines: [{ command: gate, lines: ['not ok - totals round half up'] }] },
      ],
    });
  });
});
