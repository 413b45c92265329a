import { afterEach, describe, expect, it } from '@jest/globals';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  type ExecutorSpec,
  type Script,
  type TestRepo,
  loggedReason,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const verdict = (
  cleared: boolean,
  findings: (string | { severity: string; text: string })[] = [],
  scores = cleared ? 2 : 1,
): string =>
  [
    'I read the diff.',
    '```json',
    JSON.stringify({
      scores: { provides: scores, scope: 2, style: 2, tests: 2 },
      cleared,
      findings,
    }),
    '```',
    '',
  ].join('\n');

const ALL_CLEAR = 'provides 2/2, scope 2/2, style 2/2, tests 2/2';

/** A repo with a coder `coder` and a judge `reviewer` (or the given executors). */
function setUp(opts: {
  coder: Script;
  judge?: Script;
  executors?: (c: string[], j: string[]) => ExecutorSpec[];
  judgeExecutor?: string;
  rounds?: number;
  files?: Record<string, string>;
}): void {
  repo = makeRepo({ 'README.md': 'x\n', ...(opts.files ?? {}) });
  const c = scriptedCoder(repo, 'coder', opts.coder);
  const j = scriptedCoder(repo, 'reviewer', opts.judge ?? {});
  const executors = opts.executors?.(c, j) ?? [
    { id: 'coder', command: c },
    { id: 'reviewer', command: j, roles: ['judge'] },
  ];
  repo.write(
    'epicflow.yml',
    configYaml({
      executors,
      gates: ['true'],
      extra: `judge: { executor: ${opts.judgeExecutor ?? 'reviewer'}, rounds: ${opts.rounds ?? 2} }`,
    }),
  );
  repo.commit('config');
}

const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

describe('the judge', () => {
  it("turns findings into one more coder round, then clears, noting the verdict and recording the judge's usage", async () => {
    setUp({
      coder: {
        s: { '1': { write: { 'src/s.txt': 'v1\n' } }, '3': { write: { 'src/s.txt': 'v2\n' } } },
      },
      judge: {
        s: {
          '2': {
            stdout: `${verdict(false, ['src/s.txt must say v2'])}EPICFLOW_USAGE {"input":10,"output":5,"model":"j"}\n`,
          },
          '4': { stdout: verdict(true) },
        },
      },
    });
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '[s] judge reviewer: not cleared (provides 1/2, scope 2/2, style 2/2, tests 2/2): src/s.txt must say v2',
    );
    const judged = prompts(repo, 'reviewer');
    expect(judged.map((p) => p.round)).toEqual(['2', '4']);
    expect(judged[0]?.prompt).toContain('+v1');
    expect(judged[0]?.prompt).toContain('`provides`');
    const coded = prompts(repo, 'coder');
    expect(coded.map((p) => p.round)).toEqual(['1', '3']);
    expect(coded[1]?.prompt).toContain("## The judge's findings");
    expect(coded[1]?.prompt).toContain('- src/s.txt must say v2');
    const rec = record(repo, 's') as {
      status: string;
      notes: string[];
      usage: { executor: string }[];
      executors: string[];
    };
    expect(rec.status).toBe('done');
    expect(rec.executors).toEqual(['coder']);
    expect(rec.notes).toContain(`judge reviewer cleared after 1 revision (${ALL_CLEAR})`);
    expect(rec.usage.map((u) => u.executor)).toContain('reviewer');
    expect(repo.read('README.md')).toBe('x\n');
    expect(epicMerges(repo)).toHaveLength(1);
  });

  it('fails the story when the rounds run out, quoting the findings; without judge.deferNonBlocking (the default) a minor one blocks as any', async () => {
    // Only a minor finding: with deferNonBlocking it would be deferred and the story merged.
    const minor = { severity: 'minor', text: 'tests are missing' };
    setUp({
      coder: { s: { '*': { write: { 'src/s.txt': 'v1\n' } } } },
      judge: { s: { '*': { stdout: verdict(false, [minor]) } } },
      rounds: 1,
    });
    const r = await run(repo, plan);
    expect(r.code).toBe(1);
    expect(record(repo, 's')).toMatchObject({
      status: 'failed',
      reason: loggedReason(
        'judge did not clear the story after 1 revision: minor: tests are missing',
      ),
    });
    expect(prompts(repo, 'reviewer')).toHaveLength(2);
    expect(prompts(repo, 'reviewer')[0]?.prompt).not.toContain('## Severity');
    expect(epicMerges(repo)).toHaveLength(0);
  });

  it('asks once more when the verdict is not valid JSON, quoting the problem; says so when the only judge also coded the story', async () => {
    // One executor codes (round 1) and judges (rounds 2 and 3): no other can serve.
    setUp({
      coder: {
        s: {
          '1': { write: { 'src/s.txt': 'v1\n' } },
          '2': { stdout: 'Looks fine to me!\n```json\n{"cleared": "yes"}\n```\n' },
          '3': { stdout: verdict(true) },
        },
      },
      executors: (c) => [{ id: 'coder', command: c, roles: ['coder', 'judge'] }],
      judgeExecutor: 'coder',
    });
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    const judged = prompts(repo, 'coder').filter((p) => p.round !== '1');
    expect(judged).toHaveLength(2);
    expect(judged[1]?.prompt).toContain('## Your previous answer could not be read');
    expect(judged[1]?.prompt).toContain('scores:');
    expect(r.stdout).toContain('judge answer of coder unreadable');
    const notes = (record(repo, 's') as { notes: string[] }).notes;
    expect(notes).toContain(`judge coder cleared (${ALL_CLEAR})`);
    expect(notes).toContain('judge was not independent: coder also coded the story');
  });

  it("avoids the story's coder when another judge can serve", async () => {
    setUp({
      coder: { s: { '*': { write: { 'src/s.txt': 'v1\n' } } } },
      judge: { '*': { '*': { stdout: verdict(true) } } },
      executors: (c, j) => [
        { id: 'coder', command: c, roles: ['coder', 'judge'], priority: 1 },
        { id: 'reviewer', command: j, roles: ['judge'], priority: 2 },
      ],
      judgeExecutor: 'coder',
    });
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    expect(prompts(repo, 'coder')).toHaveLength(1);
    expect(prompts(repo, 'reviewer')).toHaveLength(1);
    const notes = (record(repo, 's') as { notes: string[] }).notes;
    expect(notes).toContain(`judge reviewer cleared (${ALL_CLEAR})`);
    expect(notes.join('\n')).not.toContain('not independent');
  });

  it('marks a story with no changes done without a merge when the judge finds it already in place', async () => {
    setUp({
      files: { 'src/s.txt': 'already here\n' },
      coder: { s: { '*': { stdout: 'Nothing to do: it is already there.\n' } } },
      judge: { s: { '*': { stdout: verdict(true) } } },
    });
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    expect(prompts(repo, 'reviewer')[0]?.prompt).toContain(
      'The story branch has no changes against the epic branch',
    );
    const rec = record(repo, 's') as { status: string; notes: string[]; mergeCommit?: string };
    expect(rec.status).toBe('done');
    expect(rec.notes).toContain('already in place');
    expect(rec.mergeCommit).toBeUndefined();
    expect(epicMerges(repo)).toHaveLength(0);
    expect(r.stdout).toContain('[s] done: already in place; nothing to merge');
    // A rerun keeps it done without asking anyone again.
    const again = await run(repo, plan);
    expect(again.code).toBe(0);
    expect(prompts(repo, 'coder')).toHaveLength(1);
  });
});
