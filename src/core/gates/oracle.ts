/**
 * The oracle guard: a story must not make its gates pass by weakening them.
 * Deleting a test file, adding a skip/only marker, changing or removing an
 * assertion of a test file that existed before the story, or having fewer tests
 * pass than on the baseline is a gate failure unless the story says `testsChange`.
 */
import { posix } from 'node:path';

const TEST_DIRS = new Set(['test', 'tests', '__tests__', 'spec']);

/** A path is a test file when it lives under a test folder or is named like one. */
export function isTestFile(path: string): boolean {
  const segments = path.split('/');
  if (segments.slice(0, -1).some((s) => TEST_DIRS.has(s))) return true;
  const base = posix.basename(path);
  return (
    /\.(test|spec)\.[^/]+$/.test(base) || /_test\.[^/.]+$/.test(base) || /^test_.*\.py$/.test(base)
  );
}

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

/**
 * An assertion in the common test styles: expect(...) and friends, assert*, should,
 * ava's and tap's t.is/t.deepEqual/…, unittest's self.assert*, Go's require/assert
 * packages, JUnit's Assert, gtest's EXPECT_/ASSERT_.
 */
const ASSERTION =
  /(\bexpect\s*[.(]|\bassert\w*\s*[.(]|\.should\b|\bshould\s*\(|\bt\.(?:is|not|deepEqual|notDeepEqual|true|false|truthy|falsy|throws\w*|regex|snapshot|like|equal|same|ok|match|Errorf?|Fatalf?)\s*\(|\bself\.assert\w*\s*\(|\b(?:require|assert)\.\w+\s*\(|\bAssert\.\w+\s*\(|\b(?:EXPECT|ASSERT)_\w+\s*\()/;

interface ChangedAssertion {
  readonly file: string;
  /** The assertion as it was (the line the diff removes). */
  readonly line: string;
}

/**
 * Assertions a unified diff removes from test files that existed before it (a file
 * the diff creates has nothing to weaken): each changed or deleted assertion line,
 * unless the same line comes back in the same file (moved or re-indented).
 */
export function findChangedAssertions(diff: string): ChangedAssertion[] {
  const removed = new Map<string, string[]>();
  const added = new Map<string, Set<string>>();
  let file: string | null = null;
  let existed = false;
  for (const raw of diff.split(/\r?\n/)) {
    if (raw.startsWith('diff --git')) {
      file = null;
      existed = false;
      continue;
    }
    if (raw.startsWith('--- ')) {
      existed = raw.slice(4).trim() !== '/dev/null';
      continue;
    }
    if (raw.startsWith('+++ ')) {
      const target = raw.slice(4).trim();
      file = target === '/dev/null' ? null : target.replace(/^b\//, '');
      continue;
    }
    if (file === null || !existed || !isTestFile(file)) continue;
    const line = raw.slice(1).trim();
    if (raw.startsWith('-') && ASSERTION.test(raw)) {
      removed.set(file, [...(removed.get(file) ?? []), line]);
    } else if (raw.startsWith('+')) {
      const set = added.get(file) ?? new Set<string>();
      set.add(line);
      added.set(file, set);
    }
  }
  const result: ChangedAssertion[] = [];
  for (const [f, lines] of removed) {
    for (const line of lines) if (!added.get(f)?.has(line)) result.push({ file: f, line });
  }
  return result;
}

interface ChangedFile {
  readonly path: string;
  readonly status: string;
}

export function deletedTestFiles(changes: readonly ChangedFile[]): string[] {
  return changes.filter((c) => c.status === 'deleted' && isTestFile(c.path)).map((c) => c.path);
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
  for (const path of deletedTestFiles(input.changes)) {
    findings.push(`test file deleted: ${path}`);
  }
  for (const m of findAddedMarkers(input.diff)) {
    findings.push(`${m.marker} marker added in ${m.file}: ${m.line}`);
  }
  for (const a of findChangedAssertions(input.diff)) {
    findings.push(`assertion changed in ${a.file}, which existed before the story: ${a.line}`);
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
