import { describe, expect, it } from '@jest/globals';
import {
  decideIssueRequests,
  mergeIssueRequests,
  noIssueRequests,
  parseIssueRequests,
} from '../../../src/core/story/issue-requests.js';
import { parseConfig } from '../../../src/core/config/index.js';

const allow = { labels: ['needs-docs', 'UI'], assignees: ['octocat'] };

describe('parseIssueRequests', () => {
  it('reads add-label, remove-label and assign lines (bulleted, quoted, any case, comma lists)', () => {
    expect(
      parseIssueRequests(
        [
          'Done: the form validates.',
          'add-label: needs-docs, `ui`',
          '- Remove-Label: wip',
          '* assign: @octocat',
          'verified: npm test',
        ].join('\n'),
      ),
    ).toEqual({ addLabels: ['needs-docs', 'ui'], removeLabels: ['wip'], assignees: ['octocat'] });
  });

  it('reads nothing from a reply without such lines, and the later of add and remove stands', () => {
    expect(parseIssueRequests('I added a label parser. Labels: none.')).toBeUndefined();
    expect(parseIssueRequests('add-label: wip\nremove-label: WIP')).toEqual({
      addLabels: [],
      removeLabels: ['WIP'],
      assignees: [],
    });
    expect(noIssueRequests(parseIssueRequests('add-label:')!)).toBe(true);
  });

  it('merges a later turn over an earlier one', () => {
    const first = parseIssueRequests('add-label: needs-docs\nassign: octocat')!;
    const later = parseIssueRequests('remove-label: needs-docs\nadd-label: ui')!;
    expect(mergeIssueRequests(first, later)).toEqual({
      addLabels: ['ui'],
      removeLabels: ['needs-docs'],
      assignees: ['octocat'],
    });
  });
});

describe('decideIssueRequests', () => {
  it('keeps what the lists allow, spelled as the config spells it, and notes each dropped request', () => {
    const asked = parseIssueRequests(
      'add-label: needs-docs, epic, ui\nremove-label: needs-docs-later\nassign: octocat, mallory',
    )!;
    const { allowed, dropped } = decideIssueRequests(asked, allow);
    expect(allowed).toEqual({
      addLabels: ['needs-docs', 'UI'],
      removeLabels: [],
      assignees: ['octocat'],
    });
    expect(dropped).toEqual([
      'issue tools: dropped the request to add the label "epic": it is not in issueTools.labels (needs-docs, UI)',
      'issue tools: dropped the request to remove the label "needs-docs-later": it is not in issueTools.labels (needs-docs, UI)',
      'issue tools: dropped the request to assign "mallory": it is not in issueTools.assignees (octocat)',
    ]);
  });

  it('drops everything while the feature is off (the default config), saying so', () => {
    const config = parseConfig('', 'c.yml');
    expect(config.issueTools).toEqual({ labels: [], assignees: [] });
    const { allowed, dropped } = decideIssueRequests(
      parseIssueRequests('add-label: needs-docs\nassign: octocat')!,
      config.issueTools,
    );
    expect(noIssueRequests(allowed)).toBe(true);
    expect(dropped).toEqual([
      'issue tools: dropped the request to add the label "needs-docs": issueTools.labels is empty',
      'issue tools: dropped the request to assign "octocat": issueTools.assignees is empty',
    ]);
  });

  it('shows a hostile name on one line, cut, without a mention', () => {
    const long = `@everyone\u202e${'x'.repeat(80)}`;
    const { dropped } = decideIssueRequests(parseIssueRequests(`add-label: ${long}`)!, allow);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).not.toContain('@');
    expect(dropped[0]).not.toContain('\u202e');
    expect(dropped[0]).toContain('…"');
  });

  it('an empty request is a no-op', () => {
    const none = { addLabels: [], removeLabels: [], assignees: [] };
    expect(decideIssueRequests(none, allow)).toEqual({ allowed: none, dropped: [] });
  });
});
