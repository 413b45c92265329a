/** A resumed story leases the executor it last had first, even when another ranks higher. */
import { afterEach, describe, expect, it } from '@jest/globals';
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

describe('a resumed story', () => {
  it('goes back to its last executor first; a changed plan entry starts over with the best ranked', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const fast = scriptedCoder(repo, 'fast', { a: { '*': { write: { 'src/a.txt': 'fast\n' } } } });
    // The first run's only coder changes nothing: the story fails with it.
    const slow = scriptedCoder(repo, 'slow', { a: { '*': {} } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'slow', command: slow, priority: 5 }], gates: ['true'] }),
    );
    repo.commit('config');
    const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
    expect((await run(repo, plan)).code).toBe(1);
    expect(record(repo, 'a')).toMatchObject({ status: 'failed', executors: ['slow'] });

    // Now a better ranked coder is there too; the rerun still leases slow first.
    const both = configYaml({
      executors: [
        { id: 'fast', command: fast, priority: 1 },
        { id: 'slow', command: slow, priority: 5 },
      ],
      gates: ['true'],
    });
    repo.write('epicflow.yml', both);
    repo.commit('two coders');
    const slowTurns = prompts(repo, 'slow').length;
    expect((await run(repo, plan)).code).toBe(1);
    expect(prompts(repo, 'slow').length).toBeGreaterThan(slowTurns);
    expect(prompts(repo, 'fast')).toEqual([]);
    expect(record(repo, 'a')).toMatchObject({ status: 'failed', attempt: 2 });
    expect((record(repo, 'a')['executors'] as string[])[0]).toBe('slow');

    // A changed plan entry is new work: the best ranked coder takes it.
    const changed = planMarkdown([{ id: 'a', owns: ['src/a.txt'], description: 'Build a again.' }]);
    expect((await run(repo, changed)).code).toBe(0);
    expect(prompts(repo, 'fast').length).toBeGreaterThan(0);
    expect(record(repo, 'a')).toMatchObject({ status: 'done', executors: ['fast'] });
  });
});
