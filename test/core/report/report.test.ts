import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { ReportStory } from '../../../src/core/report/index.js';
import { renderReport } from '../../../src/core/report/index.js';
import { diamond, fenceLines, input, record, story, usage } from './fixtures.js';

/** The lines of one `## Heading` section, up to the next heading. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const rest = markdown.slice(start + 1);
  const next = rest.indexOf('\n## ', 1);
  return next < 0 ? rest : rest.slice(0, next);
}

function tableRows(markdown: string): string[] {
  return markdown.split('\n').filter((l) => l.startsWith('| `'));
}

function handover(): ReportStory {
  return {
    story: story('health-endpoint'),
    wave: 1,
    record: record('health-endpoint', 'done', {
      executors: ['codex', 'claude'],
      mergeCommit: 'fedcba9876543210fedcba9876543210fedcba98',
      usage: [
        usage('codex', 300_000, { costUsd: 0.9 }),
        usage('claude', 40_000, { measured: false, costUsd: 0.12 }),
      ],
    }),
  };
}

/** 300 stories with long titles and notes: far over GitHub's comment limit when rendered whole. */
function bigEpic(): ReportStory[] {
  return Array.from({ length: 300 }, (_, i): ReportStory => {
    const id = `story-${String(i).padStart(3, '0')}`;
    const deps = i === 0 ? [] : [`story-${String(i - 1).padStart(3, '0')}`];
    const status = i % 50 === 7 ? 'failed' : i < 200 ? 'done' : 'planned';
    const title = `A fairly long story title number ${i} that describes the work to do`;
    return {
      story: story(id, deps, title),
      wave: i + 1,
      ...(status === 'planned'
        ? {}
        : {
            record: record(id, status, {
              ...(status === 'done'
                ? { mergeCommit: 'a'.repeat(40) }
                : { reason: 'epic gates failed after merging' }),
              notes: ['restored src/outside/one.ts, src/outside/two.ts and src/outside/three.ts'],
              usage: [usage('codex', 123_456, { costUsd: 0.37 })],
            }),
          }),
    };
  });
}

describe('renderReport', () => {
  it('renders a whole small report', () => {
    const report = renderReport(
      input([handover()], { halts: [], startedAt: '2026-11-30T13:00:00Z' }),
    );
    expect(report).toBe(
      [
        '# Epic 42: Health checks',
        '',
        '- Epic branch: `epic/42`',
        '- Stories: 1 — 1 done, 0 failed, 0 waiting, 0 active, 0 planned',
        '- Elapsed: 4m 30s',
        '',
        '## Graph',
        '',
        '```mermaid',
        'flowchart TD',
        '  s0["health-endpoint: Story health-endpoint"]',
        '  classDef active fill:#ddf4ff,stroke:#0969da,color:#0a2d57',
        '  classDef planned fill:#f6f8fa,stroke:#8c959f,color:#24292f',
        '  classDef waiting fill:#fff8c5,stroke:#9a6700,color:#4d3300',
        '  classDef done fill:#dafbe1,stroke:#1a7f37,color:#0b3d1a',
        '  classDef failed fill:#ffebe9,stroke:#cf222e,color:#5c0b0b',
        '  class s0 done',
        '```',
        '',
        '## Stories',
        '',
        '| Story | Status | Wave | Branch | Merge | Executor | Tokens | Cost | Note |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        '| `health-endpoint` Story health-endpoint | done | 1 | `story/42/health-endpoint` | `fedcba9` | codex → claude | 300k + ~40k (est.) | $0.90 + ~$0.12 (est.) | — |',
        '',
        '_Figures marked (est.) are estimated from characters ÷ 4, not measured._',
        '',
        '## Totals',
        '',
        '- Measured: 300k tokens, $0.90',
        '- Estimated (characters ÷ 4): 40k tokens, ~$0.12',
        '',
        '## By executor',
        '',
        '| Executor | Stories finished | Measured | Estimated (characters ÷ 4) |',
        '| --- | --- | --- | --- |',
        '| claude | 1: health-endpoint (codex → claude) | none | 40k tokens, ~$0.12 |',
        '| codex | 0 | 300k tokens, $0.90 | none |',
        '',
      ].join('\n'),
    );
  });

  it('lists each gate red on the base with its stories and the failing lines it showed there', () => {
    const red = (id: string, lines: string[]): ReportStory => ({
      story: story(id),
      wave: 1,
      record: record(id, 'done', {
        inherited: ['npm test', 'npm run lint'],
        inheritedLines: [
          { command: 'npm test', lines },
          { command: 'npm run lint', lines: ['src/a.ts: error <no-unused-vars>'] },
        ],
      }),
    });
    const md = renderReport(
      input([
        red('cart', ['not ok - totals round half up', 'not ok - dates parse']),
        red('docs', ['not ok - dates parse']),
        // A record written before lines were kept: the gate and the story, no lines.
        {
          story: story('old'),
          wave: 1,
          record: record('old', 'done', { inherited: ['npm test'] }),
        },
      ]),
    );
    expect(section(md, 'Red on the base (tolerated)')).toBe(
      [
        '## Red on the base (tolerated)',
        '',
        'These gates failed on the epic base already, with the failing tests or lines below; the stories named were charged only with failures of their own:',
        '',
        '- npm test: `cart`, `docs`, `old`',
        '  - not ok - totals round half up',
        '  - not ok - dates parse',
        '- npm run lint: `cart`, `docs`',
        '  - src/a.ts: error &lt;no-unused-vars&gt;',
        '',
      ].join('\n'),
    );
  });

  it('heads the report with the epic, its branch, counts and elapsed time', () => {
    const report = renderReport(input(diamond()));
    expect(report.startsWith('# Epic 42: Health checks\n')).toBe(true);
    expect(report).toContain('- Epic branch: `epic/42`');
    expect(report).toContain('- Stories: 5 — 1 done, 1 failed, 1 waiting, 1 active, 1 planned');
    expect(report).toContain('- Elapsed: 1h 04m');
  });

  it('has one table row per story in plan order, with branch, short merge commit and note', () => {
    const rows = tableRows(renderReport(input(diamond())));
    expect(rows.map((r) => r.split(' | ')[0])).toEqual([
      '| `base` Story base',
      '| `api` Story api',
      '| `db` Story db',
      '| `ui` Story ui',
      '| `docs` Story docs',
    ]);
    expect(rows[0]).toBe(
      '| `base` Story base | done | 1 | `story/42/base` | `0123456` | codex | 1M | $3.00 | — |',
    );
    expect(rows[1]).toContain('| failed | 2 |');
    expect(rows[1]).toMatch(/\| no changes \|$/);
    expect(rows[4]).toBe('| `docs` Story docs | planned | 1 | — | — | — | — | — | — |');
  });

  it('links branches and commits when given URL builders', () => {
    const report = renderReport(
      input(diamond(), {
        links: {
          branch: (b) => `https://github.com/o/r/tree/${b}`,
          commit: (sha) => `https://github.com/o/r/commit/${sha}`,
        },
      }),
    );
    expect(report).toContain('- Epic branch: [`epic/42`](https://github.com/o/r/tree/epic/42)');
    expect(report).toContain(
      '[`0123456`](https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567)',
    );
  });

  it('escapes pipes, newlines and HTML in table cells', () => {
    const nasty: ReportStory = {
      story: story('nasty', [], 'Pipes | and\nnew lines <b>bold</b>'),
      wave: 1,
      record: record('nasty', 'failed', {
        reason: 'gate failed:\n| col | col |',
        notes: ['restored a|b'],
      }),
    };
    const [row = ''] = tableRows(renderReport(input([nasty])));
    expect(row).toContain('Pipes \\| and new lines &lt;b&gt;bold&lt;/b&gt;');
    expect(row).toContain('gate failed: \\| col \\| col \\|; restored a\\|b');
    // Nine cells: unescaped pipes are exactly the ten cell borders.
    expect(row.replace(/\\\|/g, '').split('|')).toHaveLength(11);
  });

  it('counts a handed-over story for the executor that finished it and shows the chain', () => {
    const byExecutor = section(renderReport(input([...diamond(), handover()])), 'By executor');
    const rows = byExecutor.split('\n').filter((l) => /^\| (codex|claude) /.test(l));
    const claude = rows.find((r) => r.startsWith('| claude '));
    const codex = rows.find((r) => r.startsWith('| codex '));
    expect(claude).toContain('| 1: health-endpoint (codex → claude) |');
    expect(codex).toContain('| 1: base |');
    expect(codex).not.toContain('health-endpoint');
    // codex still pays for what it spent on the handed-over story (1M + 200k + 300k).
    expect(codex).toContain('1.5M tokens, $4.30');
    expect(claude).toContain('| none | 40k tokens, ~$0.12 |');
  });

  it('keeps measured and estimated totals apart and labelled', () => {
    const stories: ReportStory[] = [
      {
        story: story('a'),
        wave: 1,
        record: record('a', 'done', {
          usage: [
            usage('codex', 1_200_000, { costUsd: 3.4 }),
            usage('claude', 40_000, { measured: false, costUsd: 0.12 }),
          ],
        }),
      },
    ];
    const totals = section(renderReport(input(stories)), 'Totals');
    expect(totals).toContain('- Measured: 1.2M tokens, $3.40');
    expect(totals).toContain('- Estimated (characters ÷ 4): 40k tokens, ~$0.12');
  });

  it('says "unknown" for a cost nobody could price, and marks partial costs', () => {
    const stories: ReportStory[] = [
      {
        story: story('a'),
        wave: 1,
        record: record('a', 'done', {
          usage: [
            usage('aider', 5000, { costUsd: null }),
            usage('codex', 1000, { costUsd: 0.5 }),
            usage('codex', 2000, { costUsd: null }),
          ],
        }),
      },
      {
        story: story('b'),
        wave: 1,
        record: record('b', 'done', { usage: [usage('aider', 7000, { costUsd: null })] }),
      },
    ];
    const report = renderReport(input(stories));
    expect(section(report, 'Totals')).toContain('- Measured: 15k tokens, $0.50 + unknown');
    expect(section(report, 'Totals')).toContain('- Estimated (characters ÷ 4): none');
    expect(section(report, 'By executor')).toContain('| aider | 0 | 12k tokens, cost unknown |');
    expect(tableRows(report)[0]).toContain('| 8k | $0.50 + unknown |');
    expect(tableRows(report)[1]).toContain('| 7k | unknown |');
  });

  it('shows halts, when they lift and what to do next', () => {
    const report = renderReport(
      input(diamond(), {
        halts: [
          {
            kind: 'roster-exhausted',
            message: 'no executor can take the coder role\ncodex: usage limit\nclaude: auth failed',
            until: '2026-11-30T14:00:00Z',
          },
          { kind: 'budget', message: 'budget of $50.00 spent ($51.20)' },
        ],
        nextStep: 'comment `/resume` after 14:00 UTC',
      }),
    );
    expect(section(report, 'Halted')).toContain(
      [
        '- **Roster exhausted**: no executor can take the coder role (until 14:00 UTC)',
        '  - codex: usage limit',
        '  - claude: auth failed',
        '- **Budget spent**: budget of $50.00 spent ($51.20)',
        '',
        '**Next:** comment `/resume` after 14:00 UTC',
      ].join('\n'),
    );
  });

  it('shows the next step without halts', () => {
    const report = renderReport(input(diamond(), { nextStep: 'comment `/retry api`' }));
    expect(report).not.toContain('## Halted');
    expect(section(report, 'Next step')).toContain('**Next:** comment `/retry api`');
  });

  it('stays under the comment limit for 300 stories and says what it left out', () => {
    const stories = bigEpic();
    const full = renderReport(input(stories), { maxChars: 10_000_000 });
    expect(full.length).toBeGreaterThan(65_536);
    expect(full).not.toContain('truncated');

    const url = 'https://github.com/o/r/actions/runs/1';
    const report = renderReport(input(stories, { fullReportUrl: url }));
    expect(report.length).toBeLessThanOrEqual(65_536);
    const shown = tableRows(report).length;
    expect(shown).toBeGreaterThan(20);
    expect(shown).toBeLessThan(300);
    expect(report).toContain(
      `… truncated: ${300 - shown} stories not shown. Full report: [${url}](${url})`,
    );
    expect(report).toContain(
      `_Showing ${shown} of 300 stories: failed, active and waiting first._`,
    );
    // The failed stories are among the rows kept, and the rest of the report is still there.
    for (const i of [7, 57, 107, 157])
      expect(report).toContain(`| \`story-${i.toString().padStart(3, '0')}\``);
    expect(report).toContain('## Totals');
    expect(report).toContain('## By executor');
    expect(report).toContain('… and 186 more');
    expect(fenceLines(report).length % 2).toBe(0);
  });

  it('collapses the graph before the table gets too short', () => {
    const report = renderReport(input(bigEpic()), { maxChars: 20_000 });
    expect(report.length).toBeLessThanOrEqual(20_000);
    expect(report).not.toContain('```mermaid');
    expect(report).toContain(
      '_Graph not shown: left out to keep this report within its size limit._',
    );
    expect(report).toMatch(/… truncated: \d+ stories not shown; see report\.md\n$/);
  });

  it('leaves out a graph Mermaid would refuse to render', () => {
    // 40 stories each depending on every earlier one: 780 edges, over Mermaid's 500.
    const ids = Array.from({ length: 40 }, (_, i) => `s-${i}`);
    const stories = ids.map((id, i): ReportStory => ({
      story: story(id, ids.slice(0, i)),
      wave: i + 1,
    }));
    const report = renderReport(input(stories));
    expect(report).not.toContain('```mermaid');
    expect(report).toContain(
      '_Graph not shown: 40 stories and 780 dependencies are more than Mermaid renders._',
    );
    expect(report).not.toContain('truncated');
  });

  it('keeps the header, totals and the note when the limit leaves room for little else', () => {
    const report = renderReport(input(diamond()), { maxChars: 300 });
    expect(report.length).toBeLessThanOrEqual(300);
    expect(report.startsWith('# Epic 42: Health checks\n')).toBe(true);
    expect(report).not.toContain('## Stories');
    expect(report).toMatch(/… truncated: 5 stories not shown; see report\.md\n$/);
  });

  it('rejects a limit that is not a positive integer', () => {
    expect(() => renderReport(input(diamond()), { maxChars: 0 })).toThrow(
      'renderReport: maxChars must be a positive integer, got 0',
    );
  });

  it('never exceeds any limit and never leaves a fence or table row open', () => {
    const stories = bigEpic().slice(0, 60);
    fc.assert(
      fc.property(fc.integer({ min: 120, max: 40_000 }), (maxChars) => {
        const report = renderReport(input(stories), { maxChars });
        expect(report.length).toBeLessThanOrEqual(maxChars);
        expect(fenceLines(report).length % 2).toBe(0);
        for (const line of report.split('\n').filter((l) => l.startsWith('|'))) {
          expect(line.endsWith('|')).toBe(true);
        }
      }),
      { numRuns: 40 },
    );
  });
});
