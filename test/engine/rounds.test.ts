import { afterEach, describe, expect, it } from '@jest/globals';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  type TestRepo,
  loggedReason,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const SUM_TEST = `import test from 'node:test';
import assert from 'node:assert';
import { sum } from '../src/sum.js';
test('sum adds', () => assert.strictEqual(sum(2, 3), 5));
`;

describe('coder rounds', () => {
  it('feeds a gate failure back for a fix round, then merges', async () => {
    repo = makeRepo({
      'package.json': '{"type":"module"}\n',
      'test/base.test.js': "import test from 'node:test';\ntest('base', () => {});\n",
    });
    const coder = scriptedCoder(repo, 'coder', {
      sum: {
        '1': {
          write: {
            'src/sum.js': 'export const sum = (a, b) => a - b;\n',
            'test/sum.test.js': SUM_TEST,
          },
        },
        '2': { write: { 'src/sum.js': 'export const sum = (a, b) => a + b;\n' } },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['node --test'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([{ id: 'sum', owns: ['src/sum.js', 'test/sum.test.js'] }]),
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[sum] gates failed: node --test:');
    const seen = prompts(repo, 'coder');
    expect(seen.map((p) => p.round)).toEqual(['1', '2']);
    expect(seen[1]?.prompt).toContain('## The gates failed');
    expect(seen[1]?.prompt).toContain('sum adds');
    expect(showFile(repo, 'epic/epic', 'src/sum.js')).toBe('export const sum = (a, b) => a + b;');
    // Each turn was committed on the story branch, naming the story and round.
    expect(git(repo.dir, 'log', '--format=%s', 'story/epic/sum', '-2').split('\n')).toEqual([
      'sum: round 2 by bot',
      'sum: round 1 by bot',
    ]);
  });

  it('fails a story whose fix rounds run out, and holds its dependents', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      bad: { '*': { write: { 'src/bad.txt': 'broken\n' } } },
      after: { '*': { write: { 'src/after.txt': 'x\n' } } },
      free: { '*': { write: { 'src/free.txt': 'x\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['! grep -rq broken src 2>/dev/null'],
        fixRounds: 1,
      }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'bad', owns: ['src/bad.txt'] },
        { id: 'after', owns: ['src/after.txt'], dependsOn: ['bad'] },
        { id: 'free', owns: ['src/free.txt'] },
      ]),
    );
    expect(result.code).toBe(1);
    expect(prompts(repo, 'coder').filter((p) => p.story === 'bad')).toHaveLength(2);
    expect(record(repo, 'bad')).toMatchObject({ status: 'failed' });
    expect(String(record(repo, 'bad').reason)).toMatch(/^gates failed: /);
    expect(record(repo, 'after')).toMatchObject({ status: 'waiting', reason: 'waiting for bad' });
    expect(record(repo, 'free')).toMatchObject({ status: 'done' });
    expect(epicMerges(repo)).toEqual(['Merge story free: Story free']);
    const report = reportJson(repo);
    expect(report.stories.map((s) => [s.id, s.status])).toEqual([
      ['bad', 'failed'],
      ['after', 'waiting'],
      ['free', 'done'],
    ]);
    // The failed story keeps its branch.
    expect(git(repo.dir, 'rev-parse', '--verify', 'story/epic/bad')).toMatch(/^[0-9a-f]{40}$/);
  });

  it('fails with "no changes" when the coder exits 0 without changing anything', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { idle: { '*': { stdout: 'All done!\n' } } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 'idle', owns: ['src/idle.txt'] }]));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('[idle] failed: no changes');
    expect(record(repo, 'idle')).toMatchObject({
      status: 'failed',
      reason: loggedReason('no changes'),
    });
  });

  it('counts a skipped test, a deleted test file or fewer passing tests as a gate failure', async () => {
    repo = makeRepo({
      'package.json': '{"type":"module"}\n',
      'test/a.test.js':
        "import test from 'node:test';\ntest('a1', () => {});\ntest('a2', () => {});\n",
      'test/b.test.js': "import test from 'node:test';\ntest('b', () => {});\n",
    });
    const coder = scriptedCoder(repo, 'coder', {
      skip: {
        '*': {
          write: {
            'test/a.test.js':
              "import test from 'node:test';\ntest('a1', () => {});\ntest.skip('a2', () => {});\n",
          },
        },
      },
      drop: { '*': { remove: ['test/b.test.js'] } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['node --test'],
        fixRounds: 0,
      }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'skip', owns: ['test/a.test.js'] },
        { id: 'drop', owns: ['test/b.test.js'], dependsOn: ['skip'] },
      ]),
    );
    expect(result.code).toBe(1);
    expect(String(record(repo, 'skip').reason)).toContain(
      // Spelled in pieces: this is the marker as data, not a skipped test.
      `.skip( marker added in test/a.test.js: test${'.skip'}('a2', () => {});`,
    );
    expect(String(record(repo, 'skip').reason)).toContain(
      'fewer tests pass than on the epic base: 2 instead of 3',
    );
    // That testsChange lets a story delete a test file and pass fewer tests is the guard's
    // rule (test/core/gates/gates.test.ts, "reports every weakening unless testsChange");
    // the plan's testsChange reaching the guard in a run: test/engine/existing-tests.test.ts.
  });
});
