/**
 * Baseline triage: a gate that already failed on the epic base never blocks a
 * story for the same failures; only failures the story added do. Failures are
 * compared as normalised lines, so timings and durations do not make an old
 * failure look new.
 */
import { isCutNotice } from '../cut-notice.js';
import { isCountLine, parsePassCount, stripAnsi } from './counts.js';

/** What one gate command produced. */
export interface GateRun {
  readonly command: string;
  readonly ok: boolean;
  /** Combined stdout and stderr (the runner may keep only the tail, and then says so: `cutNotice`). */
  readonly output: string;
  readonly timedOut?: boolean;
  /**
   * Read from the WHOLE output as it streamed (`GateDigest`), when the runner did: what
   * decisions rest on, never from a cut tail. Absent: read from `output`.
   */
  readonly passCount?: number | null;
  readonly failures?: readonly string[];
  /**
   * Each distinct meaningful line of the whole output, hashed (`lineKey`): for outputs that
   * name no failure, the story's run is compared with the baseline's line by line. Absent
   * past `MAX_LINE_KEYS` distinct lines.
   */
  readonly lineKeys?: readonly string[];
  /**
   * A baseline made of two runs on the same commit (`combinedBaseline`): the gate failed
   * differently from run to run there, and it is not run on that commit a third time.
   */
  readonly combined?: boolean;
}

/** Distinct lines a digest remembers for the line-by-line comparison. */
const MAX_LINE_KEYS = 200_000;

/** A short, stable key of a normalised line (FNV-1a, 64 bits as hex): pure, no crypto needed. */
function lineKey(normalised: string): string {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < normalised.length; i++) {
    h ^= BigInt(normalised.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

/**
 * The facts of a gate's output that decisions rest on, gathered line by line as the
 * output streams, so a long output is never judged by its tail: the failure lines
 * (normalised, each once) and the pass count. The folder the gate ran in (`checkout`) is
 * read out of each line first: the base's and a story's checks run in checkouts at other
 * paths, and a line that names a file by its absolute path is the same failure in both.
 */
export class GateDigest {
  private readonly failureSet = new Set<string>();
  private readonly countLines: string[] = [];
  private keys: Set<string> | undefined = new Set<string>();

  constructor(private readonly checkout?: string) {}

  push(line: string): void {
    const at = this.checkout;
    const plain =
      at === undefined || at.length < 2
        ? stripAnsi(line)
        : stripAnsi(line).replaceAll(`${at}/`, '').replaceAll(at, '.');
    const normal = normaliseLine(plain);
    if (isFailureLine(plain, normal)) this.failureSet.add(normal);
    if (isCountLine(plain)) this.countLines.push(plain);
    if (this.keys !== undefined && normal.length > 0 && !isCutNotice(plain)) {
      this.keys.add(lineKey(normal));
      if (this.keys.size > MAX_LINE_KEYS) this.keys = undefined;
    }
  }

  get lineKeys(): string[] | undefined {
    return this.keys === undefined ? undefined : [...this.keys];
  }

  get failures(): string[] {
    return [...this.failureSet];
  }

  get passCount(): number | null {
    return parsePassCount(this.countLines.join('\n'));
  }
}

function failuresOf(run: GateRun): string[] {
  return run.failures !== undefined ? [...run.failures] : failureLines(run.output);
}

export interface GateVerdict {
  readonly command: string;
  /** pass: green; inherited: red, but only with failures the baseline had; new: blocks. */
  readonly status: 'pass' | 'inherited' | 'new';
  /** The failing lines this run added (or the output tail when none can be told apart). */
  readonly newLines: readonly string[];
  readonly passCount: number | null;
}

/** Lines that name a failure in the common runners' output (pytest's `ERROR tests/x.py` too). */
const FAILURE_LINE =
  /(^not ok\b|✖|✗|×|^\s*FAIL\b|\bfailed\b|\bFAILED\b|\bError\b|\berror\b|\bERROR\b|AssertionError|^\s*--- FAIL|^\s*●|\bpanic:|Traceback)/;

/** The words of a runner's tally, besides its numbers and decoration. */
const TALLY_WORDS = new Set(
  (
    'collected item items error errors failed failure failures passed pass fail failing passing ' +
    'skipped skip pending todo warning warnings deselected selected xfailed xpassed rerun in ' +
    'total tests test suites suite files file snapshots snapshot interrupted during collection'
  ).split(' '),
);

/**
 * A runner's tally (`collected 3 items / 1 error`, `=== 1 failed, 2 passed in ===`,
 * `Tests: 1 failed, 5 total`, `# fail 1`): counts, not a failure of its own. It changes
 * whenever a story adds a test, so it never tells a story's failure from the base's; the
 * failing tests' own lines do, and the pass count is compared on its own.
 */
function isTally(normal: string): boolean {
  if (!/\d/.test(normal)) return false;
  const words = normal
    .replace(/[\d.]+/g, ' ')
    .split(/[^A-Za-z]+/)
    .filter((w) => w !== '');
  return words.length > 0 && words.every((w) => TALLY_WORDS.has(w.toLowerCase()));
}

/** Whether a line (ANSI stripped; `normal`, normalised) names a failure. */
function isFailureLine(plain: string, normal: string): boolean {
  return FAILURE_LINE.test(plain) && normal.length > 0 && !isTally(normal);
}

/** Strip what changes between runs of the same failure: ANSI, durations, temp paths. */
function normaliseLine(line: string): string {
  return stripAnsi(line)
    .replace(/^(\s*)(not ok|ok)\s+\d+/, '$1$2')
    .replace(/\(\d+(\.\d+)?\s?m?s\)/g, '')
    .replace(/\b\d+(\.\d+)?\s?m?s\b/g, '')
    .replace(/duration_ms:?\s*[\d.]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function failureLines(output: string): string[] {
  const lines = stripAnsi(output)
    .split(/\r?\n/)
    .flatMap((l) => {
      const normal = normaliseLine(l);
      return isFailureLine(l, normal) ? [normal] : [];
    });
  return [...new Set(lines)];
}

function meaningfulLines(output: string): string[] {
  return (
    stripAnsi(output)
      .split(/\r?\n/)
      // How much a runner cut differs from run to run: never a line the story added.
      .filter((l) => !isCutNotice(l))
      .map(normaliseLine)
      .filter((l) => l.length > 0)
  );
}

/** Compare a gate's run with the same command's run on the baseline. */
export function triageGate(current: GateRun, baseline: GateRun | undefined): GateVerdict {
  const passCount =
    current.passCount !== undefined ? current.passCount : parsePassCount(current.output);
  if (current.ok) return { command: current.command, status: 'pass', newLines: [], passCount };
  if (baseline === undefined || baseline.ok) {
    const lines = failuresOf(current);
    return {
      command: current.command,
      status: 'new',
      newLines: lines.length > 0 ? lines : meaningfulLines(current.output).slice(-20),
      passCount,
    };
  }
  // Both red: only lines the baseline did not have are the story's.
  const currentFailures = failuresOf(current);
  const baseFailures = new Set(failuresOf(baseline));
  let added = currentFailures.filter((l) => !baseFailures.has(l));
  if (currentFailures.length === 0) {
    // Nothing recognisable as a failure line: compare all lines — of the whole outputs when
    // the runner hashed them as they streamed, else of the text kept.
    if (current.lineKeys !== undefined && baseline.lineKeys !== undefined) {
      const baseKeys = new Set(baseline.lineKeys);
      const fresh = current.lineKeys.filter((k) => !baseKeys.has(k));
      const freshKeys = new Set(fresh);
      const shown = meaningfulLines(current.output).filter((l) => freshKeys.has(lineKey(l)));
      added =
        fresh.length === 0
          ? []
          : shown.length > 0
            ? shown
            : [`${fresh.length} line(s) not in the baseline's output, in the part not shown`];
    } else {
      const baseAll = new Set(meaningfulLines(baseline.output));
      added = meaningfulLines(current.output).filter((l) => !baseAll.has(l));
    }
  }
  if (current.timedOut === true && baseline.timedOut !== true) {
    added = [`timed out`, ...added];
  }
  return {
    command: current.command,
    status: added.length > 0 ? 'new' : 'inherited',
    newLines: added,
    passCount,
  };
}

/**
 * Whether the gates stop after this one: it stays red with failures of its own. A gate red
 * only as it was on the base does not stop the rest (it would hide their failures on every
 * run); the gates after a red one are not run, and run again in full on the next check.
 */
export function stopsGates(verdict: GateVerdict): boolean {
  return verdict.status === 'new';
}

/** Lines named at most per inherited gate: the base's failures, not a log. */
const INHERITED_LINES_MAX = 20;

/**
 * The failing tests or lines a gate red on the base showed there and still shows (the
 * failures a story was not charged for), or the base's failure lines when the run names
 * none of them; at most `INHERITED_LINES_MAX`, the count of the rest last.
 */
export function inheritedLines(current: GateRun, baseline: GateRun): string[] {
  const base = failuresOf(baseline);
  const now = new Set(failuresOf(current));
  const still = base.filter((l) => now.has(l));
  let lines = still.length > 0 ? still : base;
  if (lines.length === 0) lines = meaningfulLines(baseline.output).slice(-3);
  return lines.length > INHERITED_LINES_MAX
    ? [
        ...lines.slice(0, INHERITED_LINES_MAX),
        `… and ${lines.length - INHERITED_LINES_MAX} more line(s)`,
      ]
    : lines;
}

/**
 * Two runs of a gate on the same base commit as one baseline: a failure either run showed
 * is the base's, so a story is charged only with lines new against both. Red when either
 * was; the lower pass count.
 */
export function combinedBaseline(a: GateRun, b: GateRun): GateRun {
  const union = (x: readonly string[], y: readonly string[]): string[] => [
    ...new Set([...x, ...y]),
  ];
  const counts = [a, b]
    .map((r) => (r.passCount !== undefined ? r.passCount : parsePassCount(r.output)))
    .filter((n): n is number => n !== null);
  return {
    command: a.command,
    ok: a.ok && b.ok,
    output: [a.output, b.output].filter((o) => o !== '').join('\n'),
    ...(a.timedOut === true || b.timedOut === true ? { timedOut: true } : {}),
    passCount: counts.length === 0 ? null : Math.min(...counts),
    failures: union(failuresOf(a), failuresOf(b)),
    ...(a.lineKeys !== undefined && b.lineKeys !== undefined
      ? { lineKeys: union(a.lineKeys, b.lineKeys) }
      : {}),
    combined: true,
  };
}
