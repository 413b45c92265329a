import { describe, expect, it } from '@jest/globals';
import {
  findAddedMarkers,
  inheritedLines,
  isTestFile,
  oracleFindings,
  parsePassCount,
  triageGate,
} from '../../../src/core/gates/index.js';

const SKIP = '.' + 'skip(';
const ONLY = '.' + 'only(';
const XIT = 'x' + 'it(';

describe('parsePassCount', () => {
  it('reads node --test spec output', () => {
    expect(parsePassCount('✔ a (1.2ms)\nℹ tests 3\nℹ pass 2\nℹ fail 1\n')).toBe(2);
  });
  it('reads TAP output', () => {
    expect(parsePassCount('TAP version 13\nok 1 - a\n1..1\n# tests 1\n# pass 1\n# fail 0\n')).toBe(
      1,
    );
  });
  it('reads jest output, failed first or not', () => {
    expect(parsePassCount('Tests:       1 failed, 5 passed, 6 total\n')).toBe(5);
    expect(parsePassCount('Tests:       7 passed, 7 total\n')).toBe(7);
  });
  it('reads vitest output', () => {
    expect(
      parsePassCount(' Test Files  1 passed (1)\n      Tests  1 failed | 4 passed (5)\n'),
    ).toBe(4);
  });
  it('reads pytest output', () => {
    expect(parsePassCount('===== 1 failed, 12 passed in 0.31s =====')).toBe(12);
    expect(parsePassCount('3 passed in 0.01s')).toBe(3);
  });
  it('reads go test output', () => {
    expect(
      parsePassCount(
        '=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- PASS: TestB (0.00s)\nPASS\nok  \tx/y\t0.1s',
      ),
    ).toBe(2);
    expect(parsePassCount('ok  \texample.com/a\t0.01s\nok  \texample.com/b\t0.02s\n')).toBe(2);
  });
  it('sums repeated runs and ignores ANSI colours', () => {
    expect(parsePassCount('\u001b[32mℹ pass 2\u001b[39m\nℹ pass 3\n')).toBe(5);
  });
  it('is null when no count is reported', () => {
    expect(parsePassCount('all good\n')).toBeNull();
  });
});

describe('test files and markers', () => {
  it('recognises test files by folder or name', () => {
    for (const p of [
      'test/a.js',
      'src/tests/x.ts',
      'a.test.ts',
      'pkg/b_test.go',
      'test_x.py',
      'c.spec.js',
    ]) {
      expect(isTestFile(p)).toBe(true);
    }
    for (const p of ['src/a.ts', 'testing.md', 'src/latest.ts', 'contest/a.ts']) {
      expect(isTestFile(p)).toBe(false);
    }
  });

  it('finds skip/only markers on added lines of test files only', () => {
    // The markers are data here, spelled in pieces so no tool mistakes them for skipped tests.
    const skipped = (fn: string, name: string): string => `${fn}${SKIP}'${name}', () => {});`;
    const diff = [
      'diff --git a/test/a.test.js b/test/a.test.js',
      '--- a/test/a.test.js',
      '+++ b/test/a.test.js',
      '@@ -1,2 +1,3 @@',
      `+${skipped('test', 'slow')}`,
      `+describe${ONLY}'x', () => {});`,
      `+${XIT}'y', () => {});`,
      `-${skipped('it', 'moved')}`,
      `+${skipped('it', 'moved')}`,
      'diff --git a/src/stream.js b/src/stream.js',
      '--- a/src/stream.js',
      '+++ b/src/stream.js',
      '+reader.skip(3);',
    ].join('\n');
    expect(findAddedMarkers(diff)).toEqual([
      { file: 'test/a.test.js', line: skipped('test', 'slow'), marker: SKIP },
      { file: 'test/a.test.js', line: `describe${ONLY}'x', () => {});`, marker: ONLY },
      { file: 'test/a.test.js', line: `${XIT}'y', () => {});`, marker: XIT },
    ]);
  });

  it('reports every weakening unless testsChange', () => {
    const input = {
      changes: [{ path: 'test/a.test.js', status: 'deleted' }],
      diff: `+++ b/test/b.test.js\n+it${ONLY}'x', () => {})\n`,
      baselinePassed: 5,
      currentPassed: 4,
      testsChange: false,
    };
    expect(oracleFindings(input)).toEqual([
      'test file deleted: test/a.test.js',
      `.only( marker added in test/b.test.js: it${ONLY}'x', () => {})`,
      'fewer tests pass than on the epic base: 4 instead of 5',
    ]);
    expect(oracleFindings({ ...input, testsChange: true })).toEqual([]);
    expect(oracleFindings({ ...input, changes: [], diff: '', currentPassed: 6 })).toEqual([]);
  });
});

describe('triageGate', () => {
  const base = {
    command: 'npm test',
    ok: false,
    output: 'not ok 1 - old broken (3ms)\n# pass 4\n',
  };
  it('passes a green gate', () => {
    expect(triageGate({ command: 'npm test', ok: true, output: '# pass 5' }, base)).toEqual({
      command: 'npm test',
      status: 'pass',
      newLines: [],
      passCount: 5,
    });
  });
  it('never blocks on failures the baseline already had', () => {
    const v = triageGate(
      {
        command: 'npm test',
        ok: false,
        output: 'ok 1 - new\nnot ok 2 - old broken (5ms)\n# pass 5\n',
      },
      base,
    );
    expect(v.status).toBe('inherited');
  });
  it('names the failing lines that were red on the base and still are', () => {
    const baseline = {
      command: 'npm test',
      ok: false,
      output: 'not ok 1 - old broken (3ms)\nnot ok 2 - fixed since (1ms)\n# pass 4\n',
    };
    const current = {
      command: 'npm test',
      ok: false,
      output: 'ok 1 - new\nnot ok 2 - old broken (9ms)\n# pass 5\n',
    };
    expect(inheritedLines(current, baseline)).toEqual(['not ok - old broken']);
    // A run that names none of them: the base's own lines.
    expect(inheritedLines({ ...current, output: 'exit 1' }, baseline)).toEqual([
      'not ok - old broken',
      'not ok - fixed since',
    ]);
    // A base without a recognisable failure line: its last lines.
    expect(
      inheritedLines(current, { ...baseline, output: 'compiling\nstopped at step 3\n' }),
    ).toEqual(['compiling', 'stopped at step 3']);
    const many = Array.from({ length: 25 }, (_, i) => `not ok ${i} - broken ${i}`).join('\n');
    const listed = inheritedLines({ ...current, output: many }, { ...baseline, output: many });
    expect(listed).toHaveLength(21);
    expect(listed[20]).toBe('… and 5 more line(s)');
  });
  it('blocks on new failure lines', () => {
    const v = triageGate(
      { command: 'npm test', ok: false, output: 'not ok 1 - old broken\nnot ok 2 - sum adds\n' },
      base,
    );
    expect(v.status).toBe('new');
    expect(v.newLines).toEqual(['not ok - sum adds']);
  });
  it('blocks on any failure when the baseline was green', () => {
    const v = triageGate(
      { command: 'lint', ok: false, output: 'src/a.js\n  1:1 oops\n' },
      { command: 'lint', ok: true, output: '' },
    );
    expect(v.status).toBe('new');
    expect(v.newLines).toEqual(['src/a.js', '1:1 oops']);
  });
  it('does not count how much a runner cut from a long output as a new line', () => {
    const v = triageGate(
      {
        command: 'build',
        ok: false,
        output: '[… 3.4 MiB cut; last 256.0 KiB shown]\nstep 9 broke\n',
      },
      {
        command: 'build',
        ok: false,
        output: '[… 2.9 MiB cut; last 255.9 KiB shown]\nstep 9 broke\n',
      },
    );
    expect(v.status).toBe('inherited');
  });
});

describe("a runner's tally is no failure of its own", () => {
  /** pytest stopped by a collection error it had on the base: the tally counts the story's tests. */
  const collecting = (collected: number, errors: readonly string[]): string =>
    [
      '============================= test session starts ==============================',
      `collected ${collected} item${collected === 1 ? '' : 's'} / ${errors.length} error${errors.length === 1 ? '' : 's'}`,
      '==================================== ERRORS ====================================',
      ...errors.map((f) => `___________________ ERROR collecting ${f} ___________________`),
      "E   ModuleNotFoundError: No module named 'nltk'",
      '=========================== short test summary info ============================',
      ...errors.map((f) => `ERROR ${f}`),
      `!!!!!!!!!!!!!!!!!!!! Interrupted: ${errors.length} error during collection !!!!!!!!!!!!!!!!!!!!`,
      `=============================== ${errors.length} error in 0.06s ===============================`,
    ].join('\n');
  const gate = (output: string) => ({ command: 'pytest', ok: false, output });

  it('a story that adds a test under a collection error the base had: inherited, not charged', () => {
    const base = gate(collecting(0, ['tests/test_stopwords.py']));
    expect(triageGate(gate(collecting(1, ['tests/test_stopwords.py'])), base)).toMatchObject({
      status: 'inherited',
      newLines: [],
    });
  });

  it('a collection error of its own: charged with its ERROR lines', () => {
    const base = gate(collecting(0, ['tests/test_stopwords.py']));
    const v = triageGate(
      gate(collecting(1, ['tests/test_stopwords.py', 'tests/test_tax.py'])),
      base,
    );
    expect(v.status).toBe('new');
    expect(v.newLines).toEqual(
      expect.arrayContaining([
        'ERROR tests/test_tax.py',
        expect.stringContaining('ERROR collecting tests/test_tax.py'),
      ]),
    );
  });

  it("jest's tally changes with a test added beside a failure the base had: inherited", () => {
    const jest = (passed: number) =>
      gate(
        `  ● cart › totals round half up\n\nTests:       1 failed, ${passed} passed, ${passed + 1} total\nTest Suites: 1 failed, 2 passed, 3 total\n`,
      );
    expect(triageGate(jest(4), jest(3)).status).toBe('inherited');
  });

  it('an output that is a tally only is compared line by line: a count that grew is new', () => {
    expect(triageGate(gate('3 failed\n'), gate('2 failed\n'))).toMatchObject({
      status: 'new',
      newLines: ['3 failed'],
    });
  });
});
