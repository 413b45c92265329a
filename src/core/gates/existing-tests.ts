/**
 * Existing tests keep their meaning: without `testsChange`, a story changes no line of a
 * test file that existed on the epic base. It may only append new tests at the end of
 * such a file, in a form whose code runs when that test runs and never earlier
 * (docs/plan-format.md, "Existing tests"). Everything else in an existing test file (a
 * changed, removed or inserted line, a line appended that is not a new test) is a finding.
 * Pure: reads the story's changed paths and its unified diff.
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

export interface ChangedFile {
  readonly path: string;
  readonly status: string;
}

/** One line of a hunk, with its line number in the old (`-`, ` `) or new (`+`) file. */
interface HunkLine {
  readonly kind: ' ' | '-' | '+';
  readonly text: string;
  readonly line: number;
  /** A `-` line followed by `\ No newline at end of file`: the old file's last line. */
  readonly lastWithoutNewline?: boolean;
}

interface FileDiff {
  readonly hunks: HunkLine[][];
}

/** A path as git prints it in a diff header: `b/x`, or C-quoted (`"b/caf\303\251"`). */
export function diffHeaderPath(raw: string): string | null {
  let text = raw.trim();
  if (text === '/dev/null') return null;
  if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) {
    const bytes: number[] = [];
    const body = text.slice(1, -1);
    const simple: Record<string, number> = {
      n: 10,
      t: 9,
      r: 13,
      '"': 34,
      '\\': 92,
      a: 7,
      b: 8,
      f: 12,
      v: 11,
    };
    for (let i = 0; i < body.length; i++) {
      const c = body[i] as string;
      if (c !== '\\') {
        bytes.push(...new TextEncoder().encode(c));
        continue;
      }
      const next = body.slice(i + 1, i + 4);
      if (/^[0-7]{3}$/.test(next)) {
        bytes.push(parseInt(next, 8));
        i += 3;
      } else {
        bytes.push(simple[body[i + 1] ?? ''] ?? 92);
        i += 1;
      }
    }
    text = new TextDecoder().decode(new Uint8Array(bytes));
  }
  return text.replace(/^[ab]\//, '');
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * The hunks of each file of a unified diff, by its new path (its old one when deleted).
 * Hunk lines are read by the counts of their header, so a removed line that begins with
 * `-- ` is never taken for a file header.
 */
function parseDiff(diff: string): Map<string, FileDiff> {
  const files = new Map<string, FileDiff>();
  const lines = diff.split('\n');
  let current: FileDiff | null = null;
  let oldPath: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '');
    if (raw.startsWith('diff --git ')) {
      current = null;
      oldPath = null;
      continue;
    }
    if (raw.startsWith('--- ')) {
      oldPath = diffHeaderPath(raw.slice(4));
      continue;
    }
    if (raw.startsWith('+++ ')) {
      const path = diffHeaderPath(raw.slice(4)) ?? oldPath;
      current = { hunks: [] };
      if (path !== null) files.set(path, current);
      continue;
    }
    const header = HUNK.exec(raw);
    if (header === null || current === null) continue;
    let oldLine = Number(header[1]);
    let newLine = Number(header[3]);
    let oldLeft = header[2] === undefined ? 1 : Number(header[2]);
    let newLeft = header[4] === undefined ? 1 : Number(header[4]);
    const hunk: HunkLine[] = [];
    while ((oldLeft > 0 || newLeft > 0) && i + 1 < lines.length) {
      const line = (lines[i + 1] as string).replace(/\r$/, '');
      const kind = line.charAt(0);
      if (kind === '\\') {
        i += 1;
        continue;
      }
      if (kind !== ' ' && kind !== '-' && kind !== '+') break;
      i += 1;
      const text = line.slice(1);
      const noNewline = (lines[i + 1] ?? '').startsWith('\\');
      if (kind === '-') {
        hunk.push({
          kind,
          text,
          line: oldLine++,
          ...(noNewline ? { lastWithoutNewline: true } : {}),
        });
        oldLeft -= 1;
      } else if (kind === '+') {
        hunk.push({ kind, text, line: newLine++ });
        newLeft -= 1;
      } else {
        hunk.push({ kind, text, line: oldLine++ });
        newLine += 1;
        oldLeft -= 1;
        newLeft -= 1;
      }
    }
    current.hunks.push(hunk);
  }
  return files;
}

/** Where appended text stops being a new test, and why. */
interface Problem {
  /** Offset in the appended text. */
  readonly at: number;
  readonly why: string;
}

/** `test('name', () => {`, `it("name", async (t) => {`, `test('name', function () {` … */
const JS_HEADER =
  /(?:test|it)\(\s*(?:'[^'\\\n]*'|"[^"\\\n]*")\s*,\s*(?:async\s+)?(?:(?:\(\s*(?:[A-Za-z_$][\w$]*(?:\s*:\s*[A-Za-z_$][\w$.]*)?)?\s*\)|[A-Za-z_$][\w$]*)\s*=>|function\s*(?:[A-Za-z_$][\w$]*)?\s*\(\s*(?:[A-Za-z_$][\w$]*(?:\s*:\s*[A-Za-z_$][\w$.]*)?)?\s*\))\s*\{/y;

/** `func TestName(t *testing.T) {` — never `TestMain`, which runs every test of the package. */
const GO_HEADER = /func\s+Test(?!Main\s*\()\w*\s*\(\s*[A-Za-z_]\w*\s+\*testing\.T\s*\)\s*\{/y;

/** `def test_name(fixture, other):` at the top level, no defaults or annotations (run at import). */
const PY_HEADER =
  /^(?:async\s+)?def\s+test\w*\s*\(\s*(?:[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)*,?)?\s*\)\s*(?:->\s*None\s*)?:\s*(?:#.*)?$/;

const NOT_A_TEST = 'not a new top-level test';

function skip(re: RegExp, text: string, at: number): number {
  re.lastIndex = at;
  return re.exec(text) === null ? at : re.lastIndex;
}

/**
 * Appended JavaScript/TypeScript: only top-level `test(…)`/`it(…)` calls whose arguments are
 * a plain string and a function (no `describe`, hooks, mocks or other statements: their code
 * runs when the file loads, before the existing tests). Brackets, strings, templates and
 * comments are followed to find where each test ends; a `/` that is neither (a regular
 * expression or a division) cannot be followed safely and is refused.
 */
function jsProblem(text: string): Problem | null {
  const stack: string[] = [];
  const gap = /(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/y;
  const close = /\s*,?\s*\)/y;
  const lineEnd = /[ \t]*;?[ \t]*(?:\/\/[^\n]*)?(?:\n|$)/y;
  let i = 0;
  while (i < text.length) {
    if (stack.length === 0) {
      i = skip(gap, text, i);
      if (i >= text.length) return null;
      JS_HEADER.lastIndex = i;
      if (JS_HEADER.exec(text) === null) {
        return { at: i, why: `${NOT_A_TEST} (\`test('name', () => {\` or \`it(…)\`)` };
      }
      i = JS_HEADER.lastIndex;
      stack.push('(', '{');
      continue;
    }
    const c = text.charAt(i);
    const top = stack[stack.length - 1];
    if (top === '`') {
      if (c === '\\') i += 2;
      else if (c === '`') {
        stack.pop();
        i += 1;
      } else if (c === '$' && text.charAt(i + 1) === '{') {
        stack.push('${');
        i += 2;
      } else i += 1;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && text.charAt(j) !== c) {
        if (text.charAt(j) === '\n') return { at: i, why: 'a string left open' };
        j += text.charAt(j) === '\\' ? 2 : 1;
      }
      if (j >= text.length) return { at: i, why: 'a string left open' };
      i = j + 1;
      continue;
    }
    if (c === '`') {
      stack.push('`');
      i += 1;
      continue;
    }
    if (c === '/') {
      const next = text.charAt(i + 1);
      if (next === '/' || next === '*') {
        const after = skip(gap, text, i);
        if (after === i) return { at: i, why: 'a comment left open' };
        i = after;
        continue;
      }
      return {
        at: i,
        why: 'a `/` outside a string or comment (a regular expression or a division) cannot be read safely here',
      };
    }
    if (c === '(' || c === '[' || c === '{') {
      stack.push(c);
      i += 1;
      continue;
    }
    if (c === ')' || c === ']' || c === '}') {
      if (c === '}' && top === '${') {
        stack.pop();
        i += 1;
        continue;
      }
      const open = c === ')' ? '(' : c === ']' ? '[' : '{';
      if (top !== open) return { at: i, why: 'brackets that do not match' };
      stack.pop();
      i += 1;
      if (stack.length === 1 && c === '}') {
        // The test's function ended: only the call's `)` may follow, then the line ends.
        close.lastIndex = i;
        if (close.exec(text) === null) {
          return { at: i, why: 'more arguments after the test function (they run at load)' };
        }
        stack.pop();
        lineEnd.lastIndex = close.lastIndex;
        if (lineEnd.exec(text) === null) {
          return { at: close.lastIndex, why: 'more code after a new test on its line' };
        }
        i = lineEnd.lastIndex;
      }
      continue;
    }
    i += 1;
  }
  return stack.length === 0 ? null : { at: text.length, why: 'the new lines end inside a test' };
}

/** Appended Go: only `func TestX(t *testing.T) { … }` declarations (no `init`, `TestMain`, vars). */
function goProblem(text: string): Problem | null {
  const gap = /(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/y;
  const lineEnd = /[ \t]*(?:\/\/[^\n]*)?(?:\n|$)/y;
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    if (depth === 0) {
      i = skip(gap, text, i);
      if (i >= text.length) return null;
      GO_HEADER.lastIndex = i;
      if (GO_HEADER.exec(text) === null) {
        return { at: i, why: `${NOT_A_TEST} (\`func TestName(t *testing.T) {\`)` };
      }
      i = GO_HEADER.lastIndex;
      depth = 1;
      continue;
    }
    const c = text.charAt(i);
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text.charAt(j) !== c) {
        if (text.charAt(j) === '\n') return { at: i, why: 'a string left open' };
        j += text.charAt(j) === '\\' ? 2 : 1;
      }
      if (j >= text.length) return { at: i, why: 'a string left open' };
      i = j + 1;
    } else if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) return { at: i, why: 'a string left open' };
      i = end + 1;
    } else if (c === '/' && (text.charAt(i + 1) === '/' || text.charAt(i + 1) === '*')) {
      const after = skip(gap, text, i);
      if (after === i) return { at: i, why: 'a comment left open' };
      i = after;
    } else if (c === '{') {
      depth += 1;
      i += 1;
    } else if (c === '}') {
      depth -= 1;
      i += 1;
      if (depth === 0) {
        lineEnd.lastIndex = i;
        if (lineEnd.exec(text) === null) {
          return { at: i, why: 'more code after a new test on its line' };
        }
        i = lineEnd.lastIndex;
      }
    } else i += 1;
  }
  return depth === 0 ? null : { at: text.length, why: 'the new lines end inside a test' };
}

/**
 * Appended Python: only top-level `def test…(…):` functions and their indented bodies (no
 * decorators, classes, imports or statements: they run when the module is imported).
 */
function pyProblem(text: string): Problem | null {
  let at = 0;
  let inTest = false;
  for (const line of text.split('\n')) {
    const here = at;
    at += line.length + 1;
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    if (/^\s/.test(line)) {
      if (!inTest) return { at: here, why: 'indented lines that continue the existing code' };
      continue;
    }
    if (!PY_HEADER.test(line)) {
      return { at: here, why: `${NOT_A_TEST} (\`def test_name(fixture):\`)` };
    }
    inTest = true;
  }
  return null;
}

function appendedProblem(path: string, text: string): Problem | null {
  if (/\.[cm]?[jt]sx?$/.test(path)) return jsProblem(text);
  if (path.endsWith('.go')) return goProblem(text);
  if (path.endsWith('.py')) return pyProblem(text);
  return {
    at: 0,
    why: 'new tests are appended only to JavaScript, TypeScript, Python and Go files',
  };
}

interface Offence {
  readonly line: number;
  readonly text: string;
  readonly what: string;
}

/** What a story did to one existing test file's lines, in order; empty when it only appended tests. */
function offences(path: string, file: FileDiff): Offence[] {
  const found: Offence[] = [];
  const hunks = file.hunks.map((h) => [...h]);
  // Appending to a file whose last line had no newline rewrites that line as it was.
  for (const hunk of hunks) {
    const k = hunk.findIndex((l) => l.kind === '-' && l.lastWithoutNewline === true);
    const last = hunk[k];
    const same = hunk.findIndex((l, j) => j > k && l.kind === '+');
    if (last !== undefined && same >= 0 && hunk[same]?.text === last.text) {
      hunk.splice(same, 1);
      hunk.splice(k, 1, { kind: ' ', text: last.text, line: last.line });
    }
  }
  for (const [h, hunk] of hunks.entries()) {
    // Added lines are an append only at the end of the last hunk, with no old line after
    // them: git shows up to three lines of context after a change when there are any.
    let tail = hunk.length;
    if (h === hunks.length - 1) while (tail > 0 && hunk[tail - 1]?.kind === '+') tail -= 1;
    for (const [j, l] of hunk.entries()) {
      if (l.kind === '-') {
        found.push({ line: l.line, text: l.text, what: 'changed or removed (old line)' });
      } else if (l.kind === '+' && j < tail) {
        found.push({ line: l.line, text: l.text, what: 'added inside the existing tests' });
      }
    }
    const appended = h === hunks.length - 1 ? hunk.slice(tail) : [];
    if (appended.length === 0) continue;
    const text = appended.map((l) => l.text).join('\n');
    const problem = appendedProblem(path, text);
    if (problem === null) continue;
    const index = text.slice(0, problem.at).split('\n').length - 1;
    const at = appended[Math.min(index, appended.length - 1)] as HunkLine;
    found.push({ line: at.line, text: at.text, what: `appended, ${problem.why}` });
  }
  return found;
}

/** Findings shown per file; the rest are counted. */
const SHOWN = 3;

/**
 * One finding per existing test file the story changed beyond appending new tests (up to
 * three of its lines named), and one per such file deleted or renamed. A file that existed
 * but whose diff cannot be read is a finding too: nothing is let through unread.
 */
export function existingTestFindings(changes: readonly ChangedFile[], diff: string): string[] {
  const findings: string[] = [];
  let parsed: Map<string, FileDiff> | undefined;
  for (const change of changes) {
    if (!isTestFile(change.path)) continue;
    if (change.status === 'deleted') {
      findings.push(`test file deleted: ${change.path}`);
      continue;
    }
    if (change.status === 'renamed') {
      findings.push(`test file renamed: ${change.path}`);
      continue;
    }
    if (change.status === 'type-changed') {
      findings.push(`existing test file ${change.path} changed type (a file no more)`);
      continue;
    }
    if (change.status !== 'modified') continue;
    parsed ??= parseDiff(diff);
    const file = parsed.get(change.path);
    if (file === undefined) {
      // A mode change shows no hunk; any other change is in the diff.
      if (diff.split('\n').some((l) => l === `diff --git a/${change.path} b/${change.path}`))
        continue;
      findings.push(`existing test file ${change.path} changed (its diff could not be read)`);
      continue;
    }
    const list = offences(change.path, file);
    if (list.length === 0) continue;
    const shown = list
      .slice(0, SHOWN)
      .map((o) => `line ${o.line} ${o.what}: ${o.text.trim()}`)
      .join('; ');
    const more = list.length > SHOWN ? `; and ${list.length - SHOWN} more line(s)` : '';
    findings.push(
      `existing test changed in ${change.path}, which existed before the story: ${shown}${more}`,
    );
  }
  return findings;
}
