import { describe, expect, it } from '@jest/globals';
import { readBrief } from '../../../src/core/planner/brief.js';

describe('readBrief', () => {
  it('is null for plain prose: a Status line below the header does not count', () => {
    expect(readBrief('# Health\n\nWe want a health route.\n')).toBeNull();
    expect(readBrief('# Health\n\n## Notes\nStatus: approved\n')).toBeNull();
  });

  it('reads the status and the questions without an answer, numbered or bulleted', () => {
    const brief = readBrief(
      [
        '# Brief: x',
        'Status: **Approved**',
        '## Open questions',
        '- Which path?',
        '  - answer: /health',
        '- Which port?',
        '  Answer:',
        '3) Who calls it?',
        '## Feedback',
        '- Answer: not a question',
      ].join('\n'),
    );
    expect(brief).toEqual({
      status: 'approved',
      open: [
        { n: '2', text: 'Which port?' },
        { n: '3', text: 'Who calls it?' },
      ],
    });
  });
});
