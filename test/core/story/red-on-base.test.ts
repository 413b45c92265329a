/**
 * What a run says when a gate fails on the base already: the gate, the base, and the line
 * that says why, without the runner's rules around it.
 */
import { describe, expect, it } from '@jest/globals';
import { redOnBaseNote } from '../../../src/core/story/index.js';

const SHA = '7c3cb25b1cb6aa00';
const TAIL =
  ': stories are charged only with failures of their own, and where it cannot run at all it checks nothing until that is fixed';

describe('redOnBaseNote', () => {
  it("names the first failure, without pytest's rules around it", () => {
    const run = {
      command: '.venv/bin/python -m pytest',
      ok: false,
      output: '',
      failures: [
        '___________________ ERROR collecting tests/test_stopwords.py ___________________',
      ],
    };
    expect(redOnBaseNote(run, SHA)).toBe(
      `the gate \`.venv/bin/python -m pytest\` fails on the base 7c3cb25b1cb6 already (ERROR collecting tests/test_stopwords.py)${TAIL}`,
    );
  });

  it('no failure line: the last line of its output; a timeout says so', () => {
    const run = {
      command: 'make check',
      ok: false,
      output: 'make: *** No rule to make target\n\n',
    };
    expect(redOnBaseNote(run, SHA)).toContain('already (make: *** No rule to make target)');
    expect(redOnBaseNote({ ...run, timedOut: true }, SHA)).toContain('already (timed out)');
  });
});
