/**
 * The gates judge the story's commit, not the tree the agent worked in. A coder writes
 * files into ignored paths (they are never committed): an implementation the committed
 * code imports, a local settings file that makes a red check green. The gates run on a
 * fresh checkout of the commit, so neither is there: the story fails on the gate that
 * needs them, and nothing that only works in the agent's tree reaches the epic branch.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  showFile,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** The check the repository gates with: `src/answer.mjs`, once there, must answer 42. */
const CHECK = [
  "import { existsSync, readFileSync } from 'node:fs';",
  "const local = existsSync('check.local.json') ? JSON.parse(readFileSync('check.local.json', 'utf8')) : {};",
  "if (existsSync('src/answer.mjs') && local.skip !== true) {",
  "  const { answer } = await import('./src/answer.mjs');",
  '  if (answer() !== 42) { console.error(`FAIL: answer() is ${answer()}`); process.exit(1); }',
  '}',
  "console.log('ok');",
  '',
].join('\n');

const plan = planMarkdown([{ id: 's', owns: ['src/'] }]);

function base(): TestRepo {
  return makeRepo({
    'README.md': 'x\n',
    'check.mjs': CHECK,
    '.gitignore': 'gen/\ncheck.local.json\n',
  });
}

describe('the gates run on a checkout of the story commit', () => {
  it('an implementation only in an ignored folder the committed code imports: the gate fails on the commit', async () => {
    repo = base();
    const coder = scriptedCoder(repo, 'coder', {
      s: {
        '*': {
          write: {
            'src/answer.mjs': "export { answer } from '../gen/impl.mjs';\n",
            'gen/impl.mjs': 'export const answer = () => 42;\n',
          },
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['node check.mjs'],
        fixRounds: 0,
      }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).not.toBe(0);
    const rec = record(repo, 's');
    expect(rec['status']).toBe('failed');
    // The reason names the gate that failed on the commit, and why.
    expect(rec['reason']).toEqual(expect.stringContaining('node check.mjs'));
    expect(rec['reason']).toEqual(expect.stringContaining('gen/impl.mjs'));
    expect(epicMerges(repo)).toEqual([]);
    expect(showFile(repo, 'epic/epic', 'src/answer.mjs')).toBeNull();
    // The story's commit holds the import, never the ignored implementation.
    expect(showFile(repo, 'story/epic/s', 'src/answer.mjs')).toContain('gen/impl.mjs');
    expect(showFile(repo, 'story/epic/s', 'gen/impl.mjs')).toBeNull();
  });

  it('an ignored settings file that would turn a red gate green: the gate stays red', async () => {
    repo = base();
    const coder = scriptedCoder(repo, 'coder', {
      s: {
        '*': {
          write: {
            'src/answer.mjs': 'export const answer = () => 41;\n',
            'check.local.json': '{ "skip": true }\n',
          },
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['node check.mjs'],
        fixRounds: 0,
      }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).not.toBe(0);
    const rec = record(repo, 's');
    expect(rec['status']).toBe('failed');
    expect(rec['reason']).toEqual(expect.stringContaining('node check.mjs: FAIL: answer() is 41'));
    expect(epicMerges(repo)).toEqual([]);
  });

  it('a correct commit passes, and the agent tree’s ignored files play no part', async () => {
    repo = base();
    const coder = scriptedCoder(repo, 'coder', {
      s: {
        '*': {
          write: {
            'src/answer.mjs': 'export const answer = () => 42;\n',
            // Would hide a wrong answer; the answer is right, so it changes nothing.
            'check.local.json': '{ "skip": true }\n',
          },
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['node check.mjs'] }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    expect(showFile(repo, 'epic/epic', 'check.local.json')).toBeNull();
  });

  it('a takeover starts from the commit: what the coder before it left ignored is not in its tree', async () => {
    repo = base();
    // `a` commits half the work, leaves an ignored implementation, and stops (usage limit).
    const a = scriptedCoder(repo, 'a', {
      s: {
        '*': {
          write: {
            'src/answer.mjs': "export { answer } from '../gen/impl.mjs';\n",
            'gen/impl.mjs': 'export const answer = () => 42;\n',
          },
          exit: 75,
        },
      },
    });
    // `b` says what it found, then writes the answer itself.
    const b = scriptedCoder(repo, 'b', {
      s: {
        '*': {
          sh: [
            'if [ -e gen/impl.mjs ]; then echo found > src/seen.txt; else echo absent > src/seen.txt; fi',
          ],
          write: { 'src/answer.mjs': 'export const answer = () => 42;\n' },
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'a', command: a, priority: 1 },
          { id: 'b', command: b, priority: 2 },
        ],
        gates: ['node check.mjs'],
      }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[s] handed over from a to b');
    expect(showFile(repo, 'epic/epic', 'src/seen.txt')).toBe('absent');
    expect(showFile(repo, 'epic/epic', 'src/answer.mjs')).toBe('export const answer = () => 42;');
  });
});
