import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  reportJson,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
  loggedReason,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('executors and the roster', () => {
  it('hands over on exit 75 to the next executor, recording the chain a → b', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const a = scriptedCoder(repo, 'a', {
      '*': { '*': { write: { 'src/half.txt': 'half\n' }, exit: 75 } },
    });
    const b = scriptedCoder(repo, 'b', {
      '*': { '*': { sh: ['test -f src/half.txt'], write: { 'src/s.txt': 'done\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'a', command: a, priority: 1 },
          { id: 'b', command: b, priority: 2 },
        ],
        gates: ['true'],
      }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([{ id: 's', owns: ['src/s.txt', 'src/half.txt'] }]),
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[s] a stopped: usage limit reached');
    expect(result.stdout).toContain('[s] handed over from a to b');
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['a', 'b'] });
    expect(git(repo.dir, 'log', '-1', '--format=%B', 'epic/epic')).toContain(
      'Epicflow-Executor: a → b',
    );
    expect(reportJson(repo).stories[0]?.executor).toBe('a → b');
    expect(readFileSync(join(stateDir(repo), 'report.md'), 'utf8')).toContain('a → b');
    const takeover = prompts(repo, 'b')[0];
    expect(takeover?.round).toBe('2');
    expect(takeover?.prompt).toContain(
      'You are taking over from a, which stopped: usage limit reached',
    );
    const roster = JSON.parse(readFileSync(join(stateDir(repo), 'roster.json'), 'utf8')) as {
      exclusions: Record<string, { kind: string }>;
    };
    expect(roster.exclusions.a?.kind).toBe('usage-limit');
  });

  it('halts with roster exhausted when every coder is out, recording unstarted stories', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const a = scriptedCoder(repo, 'a', { '*': { '*': { exit: 75 } } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'a', command: a }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'first', owns: ['src/first.txt'] },
        { id: 'second', owns: ['src/second.txt'], dependsOn: ['first'] },
        { id: 'third', owns: ['src/third.txt'] },
      ]),
      { concurrency: 1 },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /epicflow: stopped launching stories: roster exhausted: a \(usage limit reached: exit code 75: out of quota; back at .* UTC\)/,
    );
    const report = reportJson(repo);
    expect(report.halts[0]?.kind).toBe('roster-exhausted');
    expect(report.stories.map((s) => s.status)).toEqual(['waiting', 'waiting', 'waiting']);
    const third = report.stories.find((s) => s.id === 'third');
    expect(third?.status).toBe('waiting');
    expect(third?.reason).toMatch(/^not started: roster exhausted/);
    // The exclusion survives the run: a rerun halts at once, starting nothing.
    const again = await run(
      repo,
      planMarkdown([
        { id: 'first', owns: ['src/first.txt'] },
        { id: 'second', owns: ['src/second.txt'], dependsOn: ['first'] },
        { id: 'third', owns: ['src/third.txt'] },
      ]),
    );
    expect(again.code).toBe(1);
    expect(prompts(repo, 'a')).toHaveLength(1);
  });

  it('answers a BLOCKED_ON claim from the plan once, then fails a repeated claim as a missing dependency', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      api: { '*': { write: { 'src/api.txt': 'x\n' } } },
      ui: {
        '*': { stdout: 'I need the route table.\nBLOCKED_ON: src/api.txt has no route table\n' },
      },
      once: {
        '1': { stdout: 'BLOCKED_ON: src/once.txt is missing\n' },
        '2': { write: { 'src/once.txt': 'x\n' } },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'api', owns: ['src/api.txt'] },
        { id: 'ui', owns: ['src/ui.txt'] },
        { id: 'once', owns: ['src/once.txt'] },
      ]),
      { concurrency: 1 },
    );
    expect(result.code).toBe(1);
    const ui = prompts(repo, 'coder').filter((p) => p.story === 'ui');
    expect(ui).toHaveLength(2);
    expect(ui[1]?.prompt).toContain('You said: BLOCKED_ON: src/api.txt has no route table');
    expect(ui[1]?.prompt).toContain('src/api.txt belongs to story api');
    expect(record(repo, 'ui')).toMatchObject({
      status: 'failed',
      reason: loggedReason(
        'missing dependency: src/api.txt has no route table (suggested plan edit: add "api" to dependsOn of "ui" (or move src/api.txt into its owns))',
      ),
    });
    const once = prompts(repo, 'coder').filter((p) => p.story === 'once');
    expect(once[1]?.prompt).toContain(
      'src/once.txt is within your own owned paths: building it is your job.',
    );
    expect(record(repo, 'once')).toMatchObject({ status: 'done' });
  });
});
