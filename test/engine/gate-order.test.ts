/**
 * The gates of a story run one after another and stop at the first that fails with
 * failures of its own; each command keeps its own log.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('the gates of a story', () => {
  it('stop at the first red command (not at one red only as on the base), one log per command', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    const counter = join(repo.tmp, 'third-gate-runs');
    const gates = [
      // Red on the base already, the same way: tolerated, and the gates go on.
      "echo 'not ok 1 - an old failure'; exit 1",
      // Red for the story only.
      "test ! -e src/a.txt || { echo 'not ok 1 - src/a.txt must not exist'; exit 1; }",
      // Counts its runs: the baseline's only, if the story's gates stopped before it.
      `echo run >> ${JSON.stringify(counter)}`,
    ];
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates, fixRounds: 0 }),
    );
    repo.commit('config');

    const r = await run(repo, planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]));
    expect(r.code).toBe(1);
    expect(String(record(repo, 'a').reason)).toContain('src/a.txt must not exist');
    // The baseline ran every gate; the story's gates stopped at the second.
    expect(readFileSync(counter, 'utf8')).toBe('run\n');

    const dir = join(stateDir(repo), 'logs', 'a');
    const logs = readdirSync(dir)
      .filter((f) => f.endsWith('-gates.log'))
      .sort((x, y) => Number(x.split('-')[1]) - Number(y.split('-')[1]))
      .map((f) => readFileSync(join(dir, f), 'utf8'));
    expect(logs).toHaveLength(2);
    expect(logs[0]).toContain(`$ ${gates[0]}\n`);
    expect(logs[0]).toContain('not ok 1 - an old failure');
    expect(logs[0]).not.toContain(gates[1]);
    // The second gate's log holds its run and its rerun, and nothing of the others.
    expect(logs[1]?.split(`$ ${gates[1]}\n`)).toHaveLength(3);
    expect(logs[1]).not.toContain(gates[0]);
    expect(logs[1]).not.toContain('echo run');
    // The failure names the log of the gate that failed.
    const named = /\(log: ([^)]+)\)$/.exec(String(record(repo, 'a').reason))?.[1] ?? '';
    expect(existsSync(named)).toBe(true);
    expect(readFileSync(named, 'utf8')).toBe(logs[1]);
  });
});
