import { describe, expect, it } from '@jest/globals';
import { renderReport } from '../../../src/core/report/index.js';
import { input, record, story, usage } from './fixtures.js';

describe('the by-executor table', () => {
  it('shows a cost under a cent as <$0.01, not as an HTML entity', () => {
    const report = renderReport(
      input([
        {
          story: story('tiny'),
          wave: 1,
          record: record('tiny', 'done', {
            executors: ['codex'],
            mergeCommit: 'a'.repeat(40),
            usage: [usage('codex', 1_000, { costUsd: 0.001 })],
          }),
        },
      ]),
    );
    const byExecutor = report.slice(report.indexOf('## By executor'));
    const row = byExecutor.split('\n').find((l) => l.startsWith('| codex '));
    expect(row).toContain('<$0.01');
    expect(report).not.toContain('&lt;');
  });
});
