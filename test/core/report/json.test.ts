import { describe, expect, it } from '@jest/globals';
import { buildReportJson } from '../../../src/core/report/index.js';
import { diamond, input, record, story, usage } from './fixtures.js';

describe('buildReportJson', () => {
  it('maps every story to done, failed or waiting with a reason', () => {
    const json = buildReportJson(input(diamond()));
    expect(json.stories.map((s) => [s.id, s.status, s.boardStatus, s.reason])).toEqual([
      ['base', 'done', 'done', null],
      ['api', 'failed', 'failed', 'no changes'],
      ['db', 'waiting', 'active', 'interrupted'],
      ['ui', 'waiting', 'waiting', 'waiting for api'],
      ['docs', 'waiting', 'planned', 'not started'],
    ]);
  });

  it('holds the fixed report.json fields (README.md)', () => {
    const json = buildReportJson(
      input(
        [
          {
            story: story('health'),
            wave: 1,
            record: record('health', 'done', {
              executors: ['codex', 'claude'],
              mergeCommit: 'abc1234',
              usage: [
                usage('codex', 1000, { costUsd: 0.1 }),
                usage('claude', 400, { measured: false, costUsd: null }),
              ],
            }),
          },
          { story: story('docs'), wave: 1 },
        ],
        { halts: [{ kind: 'cancel', message: '/cancel by @octocat' }] },
      ),
    );
    // Round-trips as plain JSON.
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    expect(json).toMatchObject({
      version: 1,
      epic: '42',
      title: 'Health checks',
      epicBranch: 'epic/42',
      generatedAt: '2026-11-30T13:04:30Z',
      counts: { done: 1, failed: 0, waiting: 0, active: 0, planned: 1, total: 2 },
      totals: {
        measured: { tokens: 1000, costUsd: 0.1, unpricedTokens: 0 },
        estimated: { tokens: 400, costUsd: null, unpricedTokens: 400 },
      },
      halts: [{ kind: 'cancel', message: '/cancel by @octocat' }],
      nextStep: null,
    });
    const [health, docs] = json.stories;
    expect(health).toMatchObject({
      id: 'health',
      status: 'done',
      branch: 'story/42/health',
      mergeCommit: 'abc1234',
      executor: 'codex → claude',
      reason: null,
      usage: {
        measured: { tokens: 1000, costUsd: 0.1 },
        estimated: { tokens: 400, costUsd: null },
      },
    });
    expect(health?.usage.entries).toHaveLength(2);
    expect(docs).toMatchObject({
      id: 'docs',
      status: 'waiting',
      branch: null,
      executor: null,
      reason: 'not started',
      usage: { measured: { tokens: 0, costUsd: 0 }, estimated: { tokens: 0 }, entries: [] },
    });
    expect(json.byExecutor.map((e) => [e.executor, e.finished.map((f) => f.id)])).toEqual([
      ['claude', ['health']],
      ['codex', []],
    ]);
  });

  it('sums costs without float noise', () => {
    const json = buildReportJson(
      input([
        {
          story: story('a'),
          wave: 1,
          record: record('a', 'done', {
            usage: [usage('codex', 1, { costUsd: 0.1 }), usage('codex', 1, { costUsd: 0.2 })],
          }),
        },
      ]),
    );
    expect(json.totals.measured.costUsd).toBe(0.3);
  });
});
