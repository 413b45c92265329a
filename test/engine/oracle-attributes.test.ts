/**
 * The oracle guard reads the story's diff: attributes that make git show a test
 * file as binary, or through a textconv that hides its lines, must not hide a
 * skipped test from it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
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

const TESTS = "import test from 'node:test';\ntest('a1', () => {});\ntest('a2', () => {});\n";
// Spelled in pieces: this is the marker as data, not a skipped test.
const SKIPPED = `import test from 'node:test';\ntest('a1', () => {});\ntest${'.skip'}('a2', () => {});\n`;

describe('the oracle guard and .gitattributes', () => {
  it.each([
    ['marks test files binary', '*.js -diff\n', {}],
    [
      'gives them a textconv that hides every line',
      '*.js diff=hide\n',
      { 'diff.hide.textconv': 'true' },
    ],
  ])('flags a skipped test when the repository %s', async (_what, attributes, config) => {
    repo = makeRepo({
      'package.json': '{"type":"module"}\n',
      '.gitattributes': attributes,
      'test/a.test.js': TESTS,
    });
    for (const [key, value] of Object.entries(config)) git(repo.dir, 'config', key, value);
    const coder = scriptedCoder(repo, 'coder', {
      skip: { '*': { write: { 'test/a.test.js': SKIPPED } } },
    });
    // A gate that reports no pass count: only the diff can tell.
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'], fixRounds: 0 }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 'skip', owns: ['test/a.test.js'] }]));
    expect(result.code).toBe(1);
    expect(String(record(repo, 'skip').reason)).toContain(
      `.skip( marker added in test/a.test.js: test${'.skip'}('a2', () => {});`,
    );
  });
});
