import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  record,
  reportJson,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('the budget in US dollars', () => {
  it('halts once the priced spend passes the cap, leaving unstarted stories waiting, and says what to raise', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // 100 input tokens at $10,000 per million = $1.00 per turn.
    const usage = 'EPICFLOW_USAGE {"input":100,"output":0,"model":"pricey"}\n';
    const coder = scriptedCoder(repo, 'coder', {
      '*': { '*': { sh: ['echo "$EPICFLOW_STORY" > "src/$EPICFLOW_STORY.txt"'], stdout: usage } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['true'],
        extra: [
          'budget: { usd: 0.5 }',
          'prices:',
          '  pricey: { input: 10000, cachedInput: 0, cacheWrite: 0, output: 0 }',
        ].join('\n'),
      }),
    );
    repo.write('src/.keep', '');
    repo.commit('config');
    const plan = planMarkdown([
      { id: 'a', owns: ['src/a.txt'] },
      { id: 'b', owns: ['src/b.txt'] },
      { id: 'c', owns: ['src/c.txt'], dependsOn: ['a'] },
    ]);
    const r = await run(repo, plan, { concurrency: 1 });
    expect(r.code).toBe(1);
    expect(record(repo, 'a')).toMatchObject({ status: 'done' });
    for (const id of ['b', 'c']) {
      expect(record(repo, id)).toMatchObject({
        status: 'waiting',
        reason: 'not started: budget of $0.50 spent ($1.00)',
      });
    }
    expect(reportJson(repo).halts).toEqual([
      { kind: 'budget', message: 'budget of $0.50 spent ($1.00)' },
    ]);
    const report = readFileSync(join(stateDir(repo), 'report.md'), 'utf8');
    expect(report).toContain(
      '**Next:** raise `budget.usd` (now 0.5) above what is spent (budget of $0.50 spent ($1.00)), then rerun `epicflow run`',
    );
    // The spend is the epic's, over every run: a rerun with the same cap starts nothing.
    const again = await run(repo, plan);
    expect(again.code).toBe(1);
    expect(record(repo, 'b')).toMatchObject({ status: 'waiting' });
  });
});
