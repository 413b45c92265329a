import { describe, expect, it } from '@jest/globals';
import { buildReportJson, renderReport } from '../../../src/core/report/index.js';
import { diamond, input, record, story, usage } from './fixtures.js';

const planning = {
  usage: [
    usage('thinker', 20_000, { costUsd: 0.25 }),
    usage('thinker', 4_000, { measured: false, costUsd: 0.01 }),
  ],
  executors: ['thinker'],
  rounds: 2,
};
const stories = [
  {
    story: story('api'),
    wave: 1,
    record: record('api', 'done', { usage: [usage('codex', 100_000, { costUsd: 1 })] }),
  },
];

describe('the report with planning usage', () => {
  const report = renderReport(input(stories, { planning }));

  it('has a Planning row above the stories', () => {
    expect(report).toContain(
      [
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        '| Planning | done | — | — | — | thinker | 20k + ~4k (est.) | $0.25 + ~$0.01 (est.) | 2 rounds |',
        '| `api` Story api | done | 1 |',
      ].join('\n'),
    );
  });

  it('counts planning in the totals', () => {
    expect(report).toContain(
      '- Measured: 120k tokens, $1.25\n- Estimated (characters ÷ 4): 4k tokens, ~$0.01',
    );
  });

  it('lists the planner by executor, with what it planned', () => {
    expect(report).toContain('| codex | 1: api | 100k tokens, $1.00 | none |');
    expect(report).toContain('| thinker | 0; planning | 20k tokens, $0.25 | 4k tokens, ~$0.01 |');
  });

  it('puts planning into report.json, and nothing when there was none', () => {
    const json = buildReportJson(input(stories, { planning }));
    expect(json.planning).toMatchObject({
      executors: ['thinker'],
      rounds: 2,
      usage: { measured: { tokens: 20_000 } },
    });
    expect(json.totals.measured.tokens).toBe(120_000);
    expect(json.byExecutor.find((e) => e.executor === 'thinker')).toMatchObject({
      planned: true,
      finished: [],
    });
    const without = buildReportJson(input(stories));
    expect('planning' in without).toBe(false);
    expect(without.byExecutor.map((e) => Object.keys(e))).toEqual([
      ['executor', 'finished', 'usage'],
    ]);
  });

  it('leaves the report as it was without planning', () => {
    expect(renderReport(input(diamond()))).not.toContain('Planning');
    expect(renderReport(input(diamond()))).not.toContain('planning');
  });

  it('marks a planner that also coded, and credits its stories', () => {
    const both = renderReport(
      input(stories, {
        planning: {
          usage: [usage('codex', 1_000, { costUsd: 0.01 })],
          executors: ['codex'],
          rounds: 1,
        },
      }),
    );
    expect(both).toContain('| Planning | done | — | — | — | codex | 1k | $0.01 | 1 round |');
    expect(both).toContain('| codex | 1: api; planning | 101k tokens, $1.01 | none |');
  });
});
