/**
 * The oracle guard: a story must not make its gates pass by weakening them.
 * Changing a test file that existed before the story in any way but appending new
 * tests (existing-tests.ts), deleting or renaming one, adding a skip/only marker, or
 * having fewer tests pass than on the baseline is a gate failure unless the story
 * says `testsChange`.
 */
import { existingTestFindings, isTestFile, type ChangedFile } from './existing-tests.js';

/** Markers that skip or focus tests in the common runners. */
const MARKER =
  /(\.(?:skip|only)\s*\(|\bx(?:it|describe|test)\s*\(|@pytest\.mark\.skip|\bt\.Skip(?:Now|f)?\s*\()/;

interface AddedMarker {
  readonly file: string;
  readonly line: string;
  readonly marker: string;
}

/**
 * Skip/only markers on lines a unified diff adds to test files. A marked line
 * that the same diff also removes (a moved or re-indented line) is not new.
 */
export function findAddedMarkers(diff: string): AddedMarker[] {
  const added = new Map<string, string[]>();
  const removed = new Map<string, Set<string>>();
  let file: string | null = null;
  for (const raw of diff.split(/\r?\n/)) {
    if (raw.startsWith('+++ ')) {
      const target = raw.slice(4).trim();
      file = target === '/dev/null' ? null : target.replace(/^b\//, '');
      continue;
    }
    if (raw.startsWith('--- ') || raw.startsWith('diff --git')) continue;
    if (file === null || !isTestFile(file)) continue;
    if (raw.startsWith('+') && MARKER.test(raw)) {
      added.set(file, [...(added.get(file) ?? []), raw.slice(1).trim()]);
    } else if (raw.startsWith('-') && MARKER.test(raw)) {
      const set = removed.get(file) ?? new Set<string>();
      set.add(raw.slice(1).trim());
      removed.set(file, set);
    }
  }
  const result: AddedMarker[] = [];
  for (const [f, lines] of added) {
    for (const line of lines) {
      if (removed.get(f)?.has(line)) continue;
      const marker = MARKER.exec(line)?.[1]?.replace(/\s+/g, '') ?? '';
      result.push({ file: f, line, marker });
    }
  }
  return result;
}

interface OracleInput {
  readonly changes: readonly ChangedFile[];
  /** The story's diff against the epic branch (unified format). */
  readonly diff: string;
  /** Passing tests on the baseline and now, summed over gates that report a count. */
  readonly baselinePassed: number | null;
  readonly currentPassed: number | null;
  readonly testsChange: boolean;
}

/** One line per oracle finding; empty when the tests were left intact. */
export function oracleFindings(input: OracleInput): string[] {
  if (input.testsChange) return [];
  const findings: string[] = [];
  findings.push(...existingTestFindings(input.changes, input.diff));
  for (const m of findAddedMarkers(input.diff)) {
    findings.push(`${m.marker} marker added in ${m.file}: ${m.line}`);
  }
  if (
    input.baselinePassed !== null &&
    input.currentPassed !== null &&
    input.currentPassed < input.baselinePassed
  ) {
    findings.push(
      `fewer tests pass than on the epic base: ${input.currentPassed} instead of ${input.baselinePassed}`,
    );
  }
  return findings;
}
