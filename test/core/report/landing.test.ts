import { describe, expect, it } from '@jest/globals';
import { buildReportJson, renderReport } from '../../../src/core/report/index.js';
import { diamond, input, record, story, usage } from './fixtures.js';

const stories = [
  {
    story: story('api'),
    wave: 1,
    record: record('api', 'done', { usage: [usage('codex', 100_000, { costUsd: 1 })] }),
  },
];
const landings = [
  {
    job: 'land-1',
    into: 'main',
    outcome: 'not-landed' as const,
    rounds: 3,
    executors: ['claude'],
    usage: [usage('claude', 10_000, { costUsd: 0.5 })],
    conflicts: ['src/a.ts'],
    reason: 'conflict markers left in src/a.ts after 3 rounds',
  },
  {
    job: 'land-2',
    into: 'main',
    outcome: 'landed' as const,
    rounds: 0,
    executors: [],
    usage: [],
    conflicts: [],
  },
];

describe('the report with landings', () => {
  const report = renderReport(input(stories, { landings }));

  it('has a Landing row per landing below the stories', () => {
    expect(report).toContain(
      [
        '| `api` Story api | done | 1 | `story/42/api` | — | codex | 100k | $1.00 | — |',
        '| Landing `land-1` into `main` | not-landed | — | — | — | claude | 10k | $0.50 | 3 rounds; conflicts: src/a.ts; conflict markers left in src/a.ts after 3 rounds |',
        '| Landing `land-2` into `main` | landed | — | — | — | — | — | — | 0 rounds |',
      ].join('\n'),
    );
  });

  it('counts the landings in the totals and by executor', () => {
    expect(report).toContain('- Measured: 110k tokens, $1.50');
    expect(report).toContain('| claude | 0 | 10k tokens, $0.50 | none |');
  });

  it('puts them into report.json, and nothing when there was none', () => {
    const json = buildReportJson(input(stories, { landings }));
    expect(json.landings).toEqual([
      expect.objectContaining({
        job: 'land-1',
        outcome: 'not-landed',
        rounds: 3,
        conflicts: ['src/a.ts'],
        usage: expect.objectContaining({ measured: expect.objectContaining({ tokens: 10_000 }) }),
      }),
      expect.objectContaining({ job: 'land-2', outcome: 'landed', reason: null }),
    ]);
    expect(json.totals.measured.tokens).toBe(110_000);
    expect('landings' in buildReportJson(input(stories))).toBe(false);
    expect(renderReport(input(diamond()))).not.toContain('Landing');
  });
});
