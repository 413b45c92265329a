import { describe, expect, it } from '@jest/globals';
import { buildBoardJson, renderBoard } from '../../../src/core/report/index.js';
import { diamond, input, record, story } from './fixtures.js';

const MERGE = 'fedcba9876543210fedcba9876543210fedcba98';

function stories(): ReturnType<typeof diamond> {
  return [
    ...diamond(),
    { story: story('later', ['ui']), wave: 4 },
    {
      story: story('handed', [], 'Handed over'),
      wave: 1,
      record: record('handed', 'done', { executors: ['codex', 'claude'], mergeCommit: MERGE }),
    },
    {
      story: story('dropped', [], 'Dropped'),
      wave: 1,
      record: record('dropped', 'done', { executors: [], notes: ['skipped by @ann'] }),
    },
  ];
}

describe('renderBoard', () => {
  it('lists Active, Planned, Waiting, Done, Failed, Skipped in that order with counts', () => {
    const board = renderBoard(input(stories()));
    const headings = board.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual([
      '## Active (1)',
      '## Planned (2)',
      '## Waiting (1)',
      '## Done (2)',
      '## Failed (1)',
      '## Skipped (1)',
    ]);
    expect(board.startsWith('# Board: epic 42 — Health checks\n')).toBe(true);
    expect(board).toContain('Epic branch: `epic/42` · 8 stories · updated 2026-11-30 13:04 UTC');
    expect(board).toContain('## Active (1)\n\n- `db` Story db · wave 2 · claude\n');
    expect(board).toContain(
      '## Planned (2)\n\n- `docs` Story docs · wave 1\n- `later` Story later · wave 4\n',
    );
    expect(board).toContain('## Waiting (1)\n\n- `ui` Story ui · wave 3 — waiting for api\n');
    expect(board).toContain('- `handed` Handed over · wave 1 · codex → claude\n');
    expect(board).toContain('## Failed (1)\n\n- `api` Story api · wave 2 · codex — no changes\n');
    expect(board).toContain('## Skipped (1)\n\n- `dropped` Dropped · wave 1 — skipped by @ann\n');
  });

  it('says so when a section is empty, and keeps each story on one line', () => {
    const board = renderBoard(
      input([{ story: story('x', [], 'Two\nlines <i>here</i>'), wave: 1 }]),
    );
    expect(board).toContain('## Active (0)\n\n_none_\n');
    expect(board).toContain('- `x` Two lines &lt;i&gt;here&lt;/i&gt; · wave 1\n');
  });
});

describe('buildBoardJson', () => {
  it('holds the same columns, the waves and every story in plan order', () => {
    const json = buildBoardJson(input(stories()));
    expect(json).toMatchObject({
      version: 1,
      epic: '42',
      title: 'Health checks',
      epicBranch: 'epic/42',
      counts: { active: 1, planned: 2, waiting: 1, done: 2, failed: 1, skipped: 1, total: 8 },
      waves: [['base', 'docs', 'handed', 'dropped'], ['api', 'db'], ['ui'], ['later']],
    });
    expect(json.items.map((i) => [i.id, i.column])).toEqual([
      ['base', 'done'],
      ['api', 'failed'],
      ['db', 'active'],
      ['ui', 'waiting'],
      ['docs', 'planned'],
      ['later', 'planned'],
      ['handed', 'done'],
      ['dropped', 'skipped'],
    ]);
    expect(json.items.find((i) => i.id === 'api')).toEqual({
      id: 'api',
      title: 'Story api',
      wave: 2,
      column: 'failed',
      dependsOn: ['base'],
      branch: 'story/42/api',
      mergeCommit: null,
      executors: ['codex'],
      reason: 'no changes',
    });
    expect(json.items.find((i) => i.id === 'docs')).toMatchObject({ branch: null, reason: null });
  });
});
