/**
 * Review rounds: after the gates pass, reviewers read the story's diff through the lenses
 * of `review.lenses` (one turn per lens); findings go back to the coder like a judge's,
 * each round is in the record, in events.jsonl and in the story's findings log, and the
 * judge still gives the final verdict.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startCollector, type Collector } from '../support/otlp-collector.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLEARED_VERDICT,
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  stateDir,
  type Script,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
let collector: Collector | undefined;
afterEach(async () => {
  repo?.cleanup();
  await collector?.close();
  collector = undefined;
});

const answer = (score: number, findings: string[] = []): string =>
  [
    'I read the diff.',
    '```json',
    JSON.stringify({ score, cleared: findings.length === 0, findings }),
    '```',
    '',
  ].join('\n');

const LENSES = [
  'review:',
  '  rounds: 2',
  '  lenses:',
  '    - { name: correctness, instruction: "Look for wrong totals." }',
  '    - { name: tests, instruction: "Look for untested behaviour." }',
].join('\n');

function setUp(opts: { coder: Script; reviewer: Script; judge?: boolean; extra?: string }): void {
  repo = makeRepo({ 'README.md': 'x\n' });
  const c = scriptedCoder(repo, 'coder', opts.coder);
  const r = scriptedCoder(repo, 'rev', opts.reviewer);
  const j = scriptedCoder(repo, 'judge', { '*': { '*': { stdout: CLEARED_VERDICT } } });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [
        { id: 'coder', command: c },
        { id: 'rev', command: r, roles: ['reviewer'] },
        ...(opts.judge === true ? [{ id: 'jud', command: j, roles: ['judge'] }] : []),
      ],
      gates: ['true'],
      extra: [
        opts.extra ?? LENSES,
        ...(opts.judge === true ? ['judge: { executor: jud }'] : []),
      ].join('\n'),
    }),
  );
  repo.commit('config');
}

const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

interface Event {
  kind: string;
  message: string;
  story?: string;
  data?: Record<string, unknown>;
}
const events = (from: TestRepo = repo): Event[] =>
  readFileSync(join(stateDir(from), 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Event);

describe('review rounds', () => {
  it('sends the findings of round 1 to the coder, clears in round 2, then the judge decides; traces each turn', async () => {
    collector = await startCollector();
    setUp({
      coder: {
        s: { '1': { write: { 'src/s.txt': 'total\n' } }, '4': { write: { 'src/s.txt': 'sum\n' } } },
      },
      // Rounds 2 and 3: the correctness and the tests lens of review round 1; 5 and 6 of round 2.
      reviewer: {
        s: {
          '2': { stdout: answer(1, ['src/s.txt: the total of an empty list must be 0']) },
          '3': { stdout: answer(2) },
          '*': { stdout: answer(2) },
        },
      },
      judge: true,
    });
    const r = await run(
      repo,
      plan,
      {},
      { env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '[s] review round 1: 1 finding (correctness 1/2, tests 2/2): correctness: src/s.txt: the total of an empty list must be 0',
    );
    expect(r.stdout).toContain('[s] review round 2: cleared (correctness 2/2, tests 2/2)');

    const reviewed = prompts(repo, 'rev');
    expect(reviewed.map((p) => p.round)).toEqual(['2', '3', '5', '6']);
    expect(reviewed[0]?.prompt).toContain('through the correctness lens (round 1)');
    expect(reviewed[0]?.prompt).toContain('> Look for wrong totals.');
    expect(reviewed[0]?.prompt).toContain('+total');
    expect(reviewed[1]?.prompt).toContain('through the tests lens (round 1)');
    // Round 2's correctness lens is shown what it found before.
    expect(reviewed[2]?.prompt).toContain('- src/s.txt: the total of an empty list must be 0');
    expect(reviewed[2]?.prompt).toContain('+sum');

    const coded = prompts(repo, 'coder');
    expect(coded.map((p) => p.round)).toEqual(['1', '4']);
    expect(coded[1]?.prompt).toContain("## The reviewers' findings");
    expect(coded[1]?.prompt).toContain(
      '- correctness: src/s.txt: the total of an empty list must be 0',
    );
    // The judge reads the change after the review cleared it, with nothing left open.
    const judged = prompts(repo, 'judge');
    expect(judged.map((p) => p.round)).toEqual(['7']);
    expect(judged[0]?.prompt).not.toContain("Reviewers' findings left open");

    const rec = record(repo, 's') as {
      status: string;
      notes: string[];
      evaluations: Record<string, unknown>[];
    };
    expect(rec.status).toBe('done');
    expect(rec.evaluations).toEqual([
      expect.objectContaining({
        kind: 'review',
        round: 1,
        attempt: 1,
        cleared: false,
        findings: ['correctness: src/s.txt: the total of an empty list must be 0'],
        scores: { correctness: 1, tests: 2 },
        executors: ['rev'],
        outcome: 'fixing',
      }),
      expect.objectContaining({ kind: 'review', round: 2, cleared: true, outcome: 'passed' }),
      expect.objectContaining({
        kind: 'judge',
        round: 1,
        cleared: true,
        scores: { provides: 2, scope: 2, style: 2, tests: 2 },
        executors: ['jud'],
        outcome: 'passed',
      }),
    ]);
    expect(rec.notes).toContain(
      'review cleared in round 2 after 1 fix round (correctness 2/2, tests 2/2)',
    );

    const rounds = events().filter((e) => e.data?.evaluation !== undefined);
    expect(rounds.map((e) => e.data)).toEqual([
      {
        evaluation: 'review',
        round: 1,
        cleared: false,
        findings: 1,
        scores: { correctness: 1, tests: 2 },
        executors: ['rev'],
      },
      {
        evaluation: 'review',
        round: 2,
        cleared: true,
        findings: 0,
        scores: { correctness: 2, tests: 2 },
        executors: ['rev'],
      },
      {
        evaluation: 'judge',
        round: 1,
        cleared: true,
        findings: 0,
        scores: { provides: 2, scope: 2, style: 2, tests: 2 },
        executors: ['jud'],
      },
    ]);
    expect(rounds.every((e) => e.story === 's')).toBe(true);

    const log = readFileSync(join(stateDir(repo), 'logs', 's', 'findings.md'), 'utf8');
    expect(log).toContain('# Findings of story `s`');
    expect(log).toContain('## Attempt 1 · review round 1: 1 finding, sent to the coder');
    expect(log).toContain('- correctness: src/s.txt: the total of an empty list must be 0');
    expect(log).toContain('correctness 1/2, tests 2/2');
    expect(log).toContain('## Attempt 1 · review round 2: cleared');
    expect(log).toContain('## Attempt 1 · judge round 1: cleared');
    expect(log.indexOf('review round 2')).toBeLessThan(log.indexOf('judge round 1'));
    expect(epicMerges(repo)).toHaveLength(1);

    // Each review turn and each judge round is an evaluator span with its scores.
    const story = collector.spans.find((s) => s.name === 'story s');
    const steps = collector.spans.filter((s) => s.parentSpanId === story?.spanId);
    const turn = (lens: string, round: number) =>
      steps.find(
        (s) =>
          s.name === 'reviewer' &&
          s.attributes['epicflow.review.lens'] === lens &&
          s.attributes['epicflow.review.round'] === round,
      )?.attributes;
    expect(turn('correctness', 1)).toMatchObject({
      'openinference.span.kind': 'EVALUATOR',
      'epicflow.evaluator.kind': 'review',
      'epicflow.review.cleared': false,
      'epicflow.review.score': 1,
      'epicflow.executor': 'rev',
    });
    expect(turn('tests', 1)).toMatchObject({
      'openinference.span.kind': 'EVALUATOR',
      'epicflow.evaluator.kind': 'review',
      'epicflow.review.cleared': true,
      'epicflow.review.score': 2,
      'epicflow.executor': 'rev',
    });
    expect(steps.find((s) => s.name === 'judge')?.attributes).toMatchObject({
      'openinference.span.kind': 'EVALUATOR',
      'epicflow.evaluator.kind': 'judge',
      'epicflow.judge.cleared': true,
      'epicflow.judge.score.provides': 2,
      'epicflow.judge.score.tests': 2,
      'epicflow.executor': 'jud',
    });
  });

  it('leaves findings open after its rounds and hands them to the judge, the final verdict', async () => {
    setUp({
      // The fix changes the diff: the lens is asked again (an unchanged one is reused, below).
      coder: {
        s: { '1': { write: { 'src/s.txt': 'v\n' } }, '*': { write: { 'src/s.txt': 'v2\n' } } },
      },
      reviewer: { s: { '*': { stdout: answer(0, ['src/s.txt: no test for it']) } } },
      judge: true,
      extra: [
        'review:',
        '  rounds: 1',
        '  lenses: [{ name: tests, instruction: "Look for untested behaviour." }]',
      ].join('\n'),
    });
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    // Coder 1, review 2, coder 3 (the one fix round), review 4 (open), judge 5.
    expect(prompts(repo, 'coder').map((p) => p.round)).toEqual(['1', '3']);
    expect(prompts(repo, 'rev').map((p) => p.round)).toEqual(['2', '4']);
    const judged = prompts(repo, 'judge');
    expect(judged[0]?.prompt).toContain("## Reviewers' findings left open");
    expect(judged[0]?.prompt).toContain('- tests: src/s.txt: no test for it');
    const rec = record(repo, 's') as { notes: string[]; evaluations: { outcome: string }[] };
    expect(rec.evaluations.map((e) => e.outcome)).toEqual(['fixing', 'open', 'passed']);
    expect(rec.notes).toContain(
      'review left 1 finding open after 1 fix round: tests: src/s.txt: no test for it',
    );
  });
});

describe('review rounds of two stories in one run', () => {
  // One run, two stories under the same lenses and no judge: `same` is fixed once with the
  // diff unchanged, `mute` gets no readable answer from a lens.
  let shared: TestRepo;
  let r: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    setUp({
      // Coder round 4 of `same` writes what round 1 wrote: the diff is the same; round 5 changes it.
      coder: {
        same: {
          '1': { write: { 'src/same.txt': 'total\n' } },
          '4': { write: { 'src/same.txt': 'total\n' } },
          '*': { write: { 'src/same.txt': 'sum\n' } },
        },
        mute: { '*': { write: { 'src/mute.txt': 'v\n' } } },
      },
      reviewer: {
        same: {
          '2': { stdout: answer(1, ['src/same.txt: the total of an empty list must be 0']) },
          '*': { stdout: answer(2) },
        },
        mute: { '*': { stdout: 'Looks fine to me.\n' } },
      },
    });
    // The file's afterEach removes `repo` after each test: this run's repository outlives them.
    shared = repo;
    repo = { ...shared, cleanup: () => undefined };
    r = await run(
      shared,
      planMarkdown([
        { id: 'same', owns: ['src/same.txt'] },
        { id: 'mute', owns: ['src/mute.txt'] },
      ]),
    );
  });
  afterAll(() => shared.cleanup());
  const of = (name: string, story: string) =>
    prompts(shared, name).filter((p) => p.story === story);

  it("reuses a lens's answer for an unchanged diff, and asks again when the diff changes", () => {
    // Review round 1 asks both lenses (2, 3); round 2 reads the same diff and asks none;
    // round 3, after the change, asks both again (6, 7).
    expect(of('coder', 'same').map((p) => p.round)).toEqual(['1', '4', '5']);
    expect(of('rev', 'same').map((p) => p.round)).toEqual(['2', '3', '6', '7']);
    const note =
      'review round 2: reused the answer of each correctness, tests lens for an unchanged diff';
    expect(r.stdout).toContain(`[same] ${note}`);
    expect(r.stdout).toContain(
      '[same] review round 2: 1 finding (correctness 1/2, tests 2/2): correctness: src/same.txt: the total of an empty list must be 0',
    );
    expect(r.stdout).toContain('[same] review round 3: cleared (correctness 2/2, tests 2/2)');
    const rec = record(shared, 'same') as {
      status: string;
      notes: string[];
      reviewed: Record<string, { executor: string; answer: { score: number } }>;
    };
    expect(rec.status).toBe('done');
    expect(rec.notes).toContain(note);
    expect(events(shared).filter((e) => e.message === note)).toHaveLength(1);
    // The answers kept are those of the last diff.
    expect(rec.reviewed).toEqual({
      correctness: expect.objectContaining({
        executor: 'rev',
        answer: expect.objectContaining({ score: 2 }),
      }),
      tests: expect.objectContaining({
        executor: 'rev',
        answer: expect.objectContaining({ score: 2 }),
      }),
    });
  });

  it('fails the story when a lens gets no readable answer, as a judge without an answer does', () => {
    expect(r.code).toBe(1);
    // The answer and its one repair re-ask.
    expect(of('rev', 'mute')).toHaveLength(2);
    expect(of('rev', 'mute')[1]?.prompt).toContain('## Your previous answer could not be read');
    const rec = record(shared, 'mute') as { status: string; reason: string };
    expect(rec.status).toBe('failed');
    expect(rec.reason).toMatch(/^review unavailable: correctness lens: rev gave no valid answer: /);
    expect(epicMerges(shared)).toEqual(['Merge story same: Story same']);
  });
});
