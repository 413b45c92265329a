/**
 * Gate decisions read the whole output as it streams: the digest of the lines is what
 * the text would say — and when only the tail of a long output is kept, the digest
 * still sees the failure at its start, and the triage never judges by the tail.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { cutNotice } from '../../../src/core/cut-notice.js';
import {
  failureLines,
  GateDigest,
  parsePassCount,
  triageGate,
  type GateRun,
} from '../../../src/core/gates/index.js';

const LINES = [
  'ok 1 - adds',
  'not ok 2 - subtracts',
  '# pass 3',
  'ℹ pass 4',
  'Tests:       1 failed, 5 passed, 6 total',
  ' Tests  2 passed (2)',
  '===== 7 passed, 1 failed in 0.12s =====',
  '--- PASS: TestA (0.00s)',
  '--- FAIL: TestB (0.01s)',
  'ok  	example.com/pkg	0.1s',
  'FAIL src/a.test.ts',
  '  ● adds › two numbers',
  'AssertionError: expected 1 to be 2',
  'Error: boom (12 ms)',
  'compiling…',
  '\u001b[31m✖ failing\u001b[39m',
];

function digestOf(text: string): GateDigest {
  const d = new GateDigest();
  for (const line of text.split('\n')) d.push(line);
  return d;
}

describe('GateDigest', () => {
  it('says what the whole text says: the same failure lines and pass count', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...LINES), fc.string()), { maxLength: 40 }),
        (lines) => {
          const text = lines.join('\n');
          const d = digestOf(text);
          expect(new Set(d.failures)).toEqual(new Set(failureLines(text)));
          expect(d.passCount).toBe(parsePassCount(text));
        },
      ),
    );
  });

  it("sees a new failure at the start of an output whose kept tail is the baseline's", () => {
    const noise = Array.from({ length: 5000 }, (_, i) => `  log line ${i}`).join('\n');
    const before = `FAIL src/old.test.ts\n${noise}\nTests: 1 failed, 9 passed, 10 total`;
    const after = `FAIL src/new.test.ts\n${before}`;
    const tail = (text: string): string =>
      `${cutNotice(text.length, 1000)}\n${text.slice(text.length - 1000)}`;
    const run = (text: string): GateRun => {
      const d = digestOf(text);
      return {
        command: 'npm test',
        ok: false,
        output: tail(text),
        failures: d.failures,
        passCount: d.passCount,
      };
    };
    const verdict = triageGate(run(after), run(before));
    expect(verdict.status).toBe('new');
    expect(verdict.newLines).toEqual(['FAIL src/new.test.ts']);
    expect(verdict.passCount).toBe(9);
  });

  it('compares outputs that name no failure line by line over the whole output, not by the tail', () => {
    const noise = (n: number) => Array.from({ length: n }, (_, i) => `step ${i} done`).join('\n');
    const before = `${noise(3000)}\nstep 9 broke`;
    const run = (text: string): GateRun => {
      const d = digestOf(text);
      const kept = text.slice(text.length - 200);
      return {
        command: 'make',
        ok: false,
        output: `${cutNotice(text.length, 200)}\n${kept}`,
        failures: d.failures,
        passCount: d.passCount,
        ...(d.lineKeys === undefined ? {} : { lineKeys: d.lineKeys }),
      };
    };
    // The same output: inherited. A line added where nobody sees it: new, and said so.
    expect(triageGate(run(before), run(before)).status).toBe('inherited');
    const after = `link: missing symbol frobnicate\n${before}`;
    expect(triageGate(run(after), run(before))).toMatchObject({
      status: 'new',
      newLines: ["1 line(s) not in the baseline's output, in the part not shown"],
    });
  });

  it('reads the folder it ran in out of each line: the same failure in the base’s checkout and a story’s is one', () => {
    const failing = (at: string): GateDigest => {
      const d = new GateDigest(at);
      d.push(`Error: Cannot find module '${at}/src/missing.js'`);
      d.push(`not ok 1 - totals (${at})`);
      return d;
    };
    const base = failing('/w/worktrees/_base');
    const story = failing('/w/worktrees/cart.checks');
    expect(story.failures).toEqual(base.failures);
    expect(story.failures).toEqual([
      "Error: Cannot find module 'src/missing.js'",
      'not ok - totals (.)',
    ]);
    expect(story.lineKeys).toEqual(base.lineKeys);
    const verdict = triageGate(
      {
        command: 'npm test',
        ok: false,
        output: '',
        failures: story.failures,
        lineKeys: story.lineKeys ?? [],
      },
      {
        command: 'npm test',
        ok: false,
        output: '',
        failures: base.failures,
        lineKeys: base.lineKeys ?? [],
      },
    );
    expect(verdict.status).toBe('inherited');
  });
});
