/**
 * Baseline triage: a gate that already failed on the epic base never blocks a
 * story for the same failures; only failures the story added do. Failures are
 * compared as normalised lines, so timings and durations do not make an old
 * failure look new.
 */
import { isCutNotice } from '../cut-notice.js';
import { parsePassCount, stripAnsi } from './counts.js';

/** What one gate command produced. */
export interface GateRun {
  readonly command: string;
  readonly ok: boolean;
  /** Combined stdout and stderr (the runner may keep only the tail, and then says so: `cutNotice`). */
  readonly output: string;
  readonly timedOut?: boolean;
}

export interface GateVerdict {
  readonly command: string;
  /** pass: green; inherited: red, but only with failures the baseline had; new: blocks. */
  readonly status: 'pass' | 'inherited' | 'new';
  /** The failing lines this run added (or the output tail when none can be told apart). */
  readonly newLines: readonly string[];
  readonly passCount: number | null;
}

/** Lines that name a failure in the common runners' output. */
const FAILURE_LINE =
  /(^not ok\b|✖|✗|×|^\s*FAIL\b|\bfailed\b|\bFAILED\b|\bError\b|\berror\b|AssertionError|^\s*--- FAIL|^\s*●|\bpanic:|Traceback)/;

/** Strip what changes between runs of the same failure: ANSI, durations, temp paths. */
export function normaliseLine(line: string): string {
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
    .filter((l) => FAILURE_LINE.test(l))
    .map(normaliseLine)
    .filter((l) => l.length > 0);
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
  const passCount = parsePassCount(current.output);
  if (current.ok) return { command: current.command, status: 'pass', newLines: [], passCount };
  if (baseline === undefined || baseline.ok) {
    const lines = failureLines(current.output);
    return {
      command: current.command,
      status: 'new',
      newLines: lines.length > 0 ? lines : meaningfulLines(current.output).slice(-20),
      passCount,
    };
  }
  // Both red: only lines the baseline did not have are the story's.
  const currentFailures = failureLines(current.output);
  const baseFailures = new Set(failureLines(baseline.output));
  let added = currentFailures.filter((l) => !baseFailures.has(l));
  if (currentFailures.length === 0) {
    // Nothing recognisable as a failure line: fall back to comparing all lines.
    const baseAll = new Set(meaningfulLines(baseline.output));
    added = meaningfulLines(current.output).filter((l) => !baseAll.has(l));
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
