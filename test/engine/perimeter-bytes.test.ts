import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** The epic branch's paths as bytes (hex), whatever their encoding. */
function mergedPaths(): string[] {
  const out = execFileSync('git', ['ls-tree', '-r', '-z', '--name-only', 'epic/epic'], {
    cwd: repo.dir,
  });
  const paths: string[] = [];
  let start = 0;
  for (let i = 0; i < out.length; i++) {
    if (out[i] === 0) {
      paths.push(out.subarray(start, i).toString('hex'));
      start = i + 1;
    }
  }
  return paths;
}
const hex = (s: string): string => Buffer.from(s, 'latin1').toString('hex');

describe('paths that are not UTF-8', () => {
  it('are never merged, owned or not: the coder is told why, and a story that keeps them fails saying so', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      cart: {
        '*': {
          write: { 'src/cart/ok.js': 'ok\n' },
          sh: [
            `printf in > "$(printf 'src/cart/\\377.js')"`,
            `printf out > "$(printf 'src/\\376.js')"`,
            `printf out > "$(printf 'src/\\377.js')"`,
          ],
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'], fixRounds: 0 }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 'cart', owns: ['src/cart'] }]));
    expect(result.code).toBe(1);
    // Neither the bytes the coder wrote nor what they read as reach the epic branch.
    expect(mergedPaths()).toEqual([hex('README.md'), hex('epicflow.yml')]);
    expect(record(repo, 'cart')).toMatchObject({ status: 'failed' });
    expect(String(record(repo, 'cart').reason)).toMatch(
      /^refused: src\/cart\/\uFFFD\.js \(path that is not UTF-8\)/,
    );
    // The second turn was told which paths and why.
    expect(prompts(repo, 'coder')[1]?.prompt).toContain('never merged (path that is not UTF-8)');
  }, 180_000);
});
