import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/**
 * Each story's coder notes when it starts, waits (at most 3 s) for the other story to
 * start too, then notes its end: side by side the log reads start, start, end, end; one
 * at a time it reads start, end, start, end.
 */
function coderStep(dir: string, mine: string, other: string): string {
  const log = join(dir, 'coders.log');
  const flag = (id: string): string => join(dir, `started-${id}`);
  return [
    `echo "start ${mine}" >> '${log}'`,
    `touch '${flag(mine)}'`,
    `i=0; while [ ! -f '${flag(other)}' ] && [ $i -lt 60 ]; do sleep 0.05; i=$((i+1)); done`,
    `echo "end ${mine}" >> '${log}'`,
  ].join('; ');
}

async function runTwo(configured: number, flag: number): Promise<string[]> {
  repo = makeRepo({ 'README.md': 'x\n' });
  const coder = scriptedCoder(repo, 'coder', {
    a: { '*': { sh: [coderStep(repo.tmp, 'a', 'b')], write: { 'src/a.txt': 'a\n' } } },
    b: { '*': { sh: [coderStep(repo.tmp, 'b', 'a')], write: { 'src/b.txt': 'b\n' } } },
  });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [{ id: 'bot', command: coder, slots: 2 }],
      gates: ['true'],
      concurrency: configured,
    }),
  );
  repo.commit('config');
  const result = await run(
    repo,
    planMarkdown([
      { id: 'a', owns: ['src/a.txt'] },
      { id: 'b', owns: ['src/b.txt'] },
    ]),
    { concurrency: flag },
  );
  // The run's own lines, should it fail.
  const shown = result.code === 0 ? '' : result.stdout;
  expect({ code: result.code, stderr: result.stderr, shown }).toEqual({
    code: 0,
    stderr: '',
    shown: '',
  });
  return readFileSync(join(repo.tmp, 'coders.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '');
}

describe('epicflow run --concurrency', () => {
  it('wins over a larger config value: never two stories at once', async () => {
    expect(await runTwo(2, 1)).toEqual(['start', 'end', 'start', 'end']);
  });

  it('wins over a smaller config value: two stories side by side', async () => {
    expect(await runTwo(1, 2)).toEqual(['start', 'start', 'end', 'end']);
  });
});
