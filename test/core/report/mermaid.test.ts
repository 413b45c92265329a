import { describe, expect, it } from '@jest/globals';
import {
  escapeMermaidLabel,
  MERMAID_LABEL_MAX,
  renderMermaid,
} from '../../../src/core/report/index.js';
import { diamond, story } from './fixtures.js';

/** A node line: generated id, then a quoted label holding no Mermaid syntax except entity codes. */
const NODE_LINE = /^ {2}s\d+\["(?:[^"[\]<>{}|#;`\n]|#(?:quot|amp|lt|gt|\d+);)*"\]$/;

function labels(graph: string): string[] {
  return graph
    .split('\n')
    .filter((l) => /^ {2}s\d+\[/.test(l))
    .map((l) => l.slice(l.indexOf('["') + 2, l.lastIndexOf('"]')));
}

describe('renderMermaid', () => {
  it('draws a diamond plan: nodes, dependency edges and status classes', () => {
    const graph = renderMermaid(diamond());
    const lines = graph.split('\n');
    expect(lines[0]).toBe('```mermaid');
    expect(lines[1]).toBe('flowchart TD');
    expect(lines[lines.length - 1]).toBe('```');
    expect(lines).toEqual(
      expect.arrayContaining([
        '  s0["base: Story base"]',
        '  s1["api: Story api"]',
        '  s2["db: Story db"]',
        '  s3["ui: Story ui"]',
        '  s4["docs: Story docs"]',
        '  s0 --> s1',
        '  s0 --> s2',
        '  s1 --> s3',
        '  s2 --> s3',
        '  class s0 done',
        '  class s1 failed',
        '  class s2 active',
        '  class s3 waiting',
        '  class s4 planned',
      ]),
    );
    expect(lines.filter((l) => l.includes('-->'))).toHaveLength(4);
    for (const status of ['done', 'failed', 'active', 'waiting', 'planned']) {
      expect(lines.some((l) => l.startsWith(`  classDef ${status} fill:`))).toBe(true);
    }
    expect(graph).toMatch(/classDef done fill:#dafbe1/); // green
    expect(graph).toMatch(/classDef failed fill:#ffebe9/); // red
  });

  it('keeps labels safe whatever a title holds', () => {
    const nasty = 'Evil "]|<script>alert(1)</script>\nnext line; {x} #1 `code` [y] end';
    const graph = renderMermaid([{ story: story('evil', [], nasty), wave: 1 }]);
    const nodeLines = graph.split('\n').filter((l) => /^ {2}s\d+\[/.test(l));
    expect(nodeLines).toHaveLength(1);
    expect(nodeLines[0]).toMatch(NODE_LINE);
    const [label = ''] = labels(graph);
    expect(label).not.toMatch(/["\]<>\n]/);
    expect(label).toContain('#quot;#93;#124;#lt;script#gt;');
    // The line break became a space: the graph has exactly one node line and no stray text.
    expect(graph.split('\n')).toHaveLength(2 + 1 + 5 + 1 + 1);
  });

  it('caps long labels before escaping, so no entity is cut in half', () => {
    const label = escapeMermaidLabel(`${'"'.repeat(200)}`);
    expect(label).toMatch(/^(#quot;)+…$/);
    expect(Array.from(label.replace(/#quot;/g, '"'))).toHaveLength(MERMAID_LABEL_MAX);
  });

  it('draws no edge to a dependency that is not in the graph', () => {
    const graph = renderMermaid([{ story: story('a', ['gone']), wave: 2 }]);
    expect(graph).not.toContain('-->');
  });
});
