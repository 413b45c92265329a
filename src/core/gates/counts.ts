/**
 * Pass counts from the summaries test runners print. A gate's output usually
 * holds one runner's format; the first format found wins so that one summary
 * line is never counted twice (jest's "Tests: 5 passed" also looks like pytest's).
 */

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

interface CountFormat {
  readonly name: string;
  /** Returns the counts found, or an empty list when the format is absent. */
  readonly find: (lines: readonly string[]) => number[];
}

function matchAll(lines: readonly string[], re: RegExp): number[] {
  const found: number[] = [];
  for (const line of lines) {
    const m = re.exec(line);
    if (m?.[1] !== undefined) found.push(Number(m[1]));
  }
  return found;
}

const FORMATS: readonly CountFormat[] = [
  // jest: "Tests:       1 failed, 5 passed, 6 total"
  { name: 'jest', find: (l) => matchAll(l, /^\s*Tests:\s+(?:.*?\s)?(\d+) passed/) },
  // vitest: " Tests  1 failed | 5 passed (6)"
  { name: 'vitest', find: (l) => matchAll(l, /^\s*Tests\s+(?:.*?\s)?(\d+) passed\b/) },
  // node --test with the spec reporter: "ℹ pass 5"
  { name: 'node-test', find: (l) => matchAll(l, /^\s*ℹ pass (\d+)\s*$/) },
  // TAP (node --test's TAP reporter, tape, …): "# pass 5" or "# pass  5"
  { name: 'tap', find: (l) => matchAll(l, /^\s*# pass\s+(\d+)\s*$/) },
  // pytest: "===== 5 passed, 1 failed in 0.12s =====" or "5 passed in 0.1s"
  {
    name: 'pytest',
    find: (l) => matchAll(l, /^=*\s*(?:\d+ \w+, )*(\d+) passed\b.*\bin [\d.]+s\b/),
  },
  // go test -v: one "--- PASS:" per test
  {
    name: 'go-verbose',
    find: (l) => {
      const n = l.filter((line) => /^\s*--- PASS: /.test(line)).length;
      return n > 0 ? [n] : [];
    },
  },
  // go test: one "ok  <package>" per passing package
  {
    name: 'go',
    find: (l) => {
      const n = l.filter((line) => /^ok\s+\S+/.test(line)).length;
      return n > 0 ? [n] : [];
    },
  },
];

/** Patterns of the lines the formats read: a line no format reads never changes a count. */
const COUNT_LINE =
  /^\s*Tests:?\s|^\s*ℹ pass \d|^\s*# pass\s|\bpassed\b.*\bin [\d.]+s\b|^\s*--- PASS: |^ok\s+\S/;

/** Whether a line (ANSI stripped) may be part of a pass count. */
export function isCountLine(line: string): boolean {
  return COUNT_LINE.test(line);
}

/**
 * The number of passing tests a gate's output reports, or null when it reports
 * none in a known format. Several runs of the same runner in one gate are summed.
 */
export function parsePassCount(output: string): number | null {
  const lines = stripAnsi(output).split(/\r?\n/);
  for (const format of FORMATS) {
    const counts = format.find(lines);
    if (counts.length > 0) return counts.reduce((a, b) => a + b, 0);
  }
  return null;
}
