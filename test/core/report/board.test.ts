import { describe, expect, it } from '@jest/globals';
import { renderBoard } from '../../../src/core/report/index.js';
import { diamond, input, record, story } from './fixtures.js';

describe('renderBoard', () => {
  it('lists Active, Planned, Waiting, Done, Failed in that order with counts', () => {
    const stories = [
      ...diamond(),
      { story: story('later', ['ui']), wave: 4 },
      {
        story: story('handed', [], 'Handed over'),
        wave: 1,
        record: record('handed', 'done', { executors: ['codex', 'claude'] }),
      },
    ];
    const board = renderBoard(input(stories));
    const headings = board.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual([
      '## Active (1)',
      '## Planned (2)',
      '## Waiting (1)',
      '## Done (2)',
      '## Failed (1)',
    ]);
    expect(board.startsWith('# Board: epic 42 — Health checks\n')).toBe(true);
    expect(board).toContain('Epic branch: `epic/42` · 7 stories · updated 2026-11-30 13:04 UTC');
    expect(board).toContain('## Active (1)\n\n- `db` Story db · claude\n');
    expect(board).toContain('## Planned (2)\n\n- `docs` Story docs\n- `later` Story later\n');
    expect(board).toContain('## Waiting (1)\n\n- `ui` Story ui — waiting for api\n');
    expect(board).toContain('- `handed` Handed over · codex → claude\n');
    expect(board).toContain('## Failed (1)\n\n- `api` Story api · codex — no changes\n');
  });

  it('says so when a section is empty, and keeps each story on one line', () => {
    const board = renderBoard(
      input([{ story: story('x', [], 'Two\nlines <i>here</i>'), wave: 1 }]),
    );
    expect(board).toContain('## Active (0)\n\n_none_\n');
    expect(board).toContain('- `x` Two lines &lt;i&gt;here&lt;/i&gt;\n');
  });
});
