import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  showFile,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('the gates of a story based on the epic head', () => {
  it('run once on its commit: the merged tree is the same files, so they are not run again', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const runs = join(repo.tmp, 'gate-runs');
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        // Each run says which files it saw.
        gates: [`ls src 2>/dev/null | tr '\\n' ' ' >> ${runs}; echo >> ${runs}`],
      }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
      ]),
    );
    expect(result.code).toBe(0);
    expect(epicMerges(repo)).toEqual(['Merge story a: Story a', 'Merge story b: Story b']);
    expect(showFile(repo, 'epic/epic', 'src/b.txt')).toBe('b');
    // The baseline, then each story's own run; none on a merged tree.
    expect(readFileSync(runs, 'utf8')).toBe('\na.txt \na.txt b.txt \n');
    expect(result.stdout).toContain('[b] the merged tree is the checked commit’s: its gates stand');
  });
});
