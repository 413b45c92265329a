/**
 * Existing tests keep their meaning: the diffs here are made by real git between two
 * commits of a temp repository, read with the flags epicflow reads a story's diff with.
 */
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existingTestFindings, oracleFindings } from '../../src/core/gates/index.js';
import { PATCH_AS_TEXT } from '../../src/adapters/git/listings.js';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/**
 * One repository for every case of the rule (`story`): each case is a branch of its own,
 * two commits made by one `git fast-import`, so the diffs are real git's between two commits.
 */
let cases: TestRepo | undefined;
let made = 0;
afterAll(() => cases?.cleanup());

const STATUS: Record<string, string> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  T: 'type-changed',
};

/** A commit of `files` (null: deleted; `executable` paths with mode 755) in a fast-import stream. */
function commitOf(
  branch: string,
  message: string,
  files: Record<string, string | null>,
  executable: readonly string[] = [],
): string {
  const lines = [
    `commit refs/heads/${branch}`,
    'committer Test <test@example.com> 0 +0000',
    `data ${Buffer.byteLength(message)}`,
    message,
  ];
  for (const [path, text] of Object.entries(files)) {
    if (text === null) {
      lines.push(`D ${path}`);
      continue;
    }
    const mode = executable.includes(path) ? '100755' : '100644';
    lines.push(`M ${mode} inline ${path}`, `data ${Buffer.byteLength(text)}`, text);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The story's changes and diff when `after` (null: deleted) is committed over `before`, the
 * `executable` paths then with mode 755 (their text as before unless `after` changes it).
 */
function story(
  before: Record<string, string>,
  after: Record<string, string | null>,
  executable: readonly string[] = [],
): { changes: { path: string; status: string }[]; diff: string } {
  cases ??= makeRepo({ 'README.md': 'the cases are branches of their own\n' });
  const dir = cases.dir;
  made += 1;
  const branch = `case-${made}`;
  const changed: Record<string, string | null> = { ...after };
  for (const path of executable) changed[path] ??= before[path] ?? null;
  execFileSync('git', ['fast-import', '--quiet'], {
    cwd: dir,
    input: commitOf(branch, 'before', before) + commitOf(branch, 'story', changed, executable),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const range = `${branch}~1...${branch}`;
  // NUL-separated, as epicflow reads it: paths are never quoted.
  const fields = git(dir, 'diff', '--name-status', '-z', '--no-renames', range).split('\0');
  const changes: { path: string; status: string }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const letter = fields[i] ?? '';
    changes.push({ path: fields[i + 1] ?? '', status: STATUS[letter.charAt(0)] ?? 'modified' });
  }
  const diff = git(dir, 'diff', ...PATCH_AS_TEXT, range, '--');
  return { changes, diff };
}

function findings(before: Record<string, string>, after: Record<string, string | null>): string[] {
  const { changes, diff } = story(before, after);
  return existingTestFindings(changes, diff);
}

const JS = [
  "import { test } from 'node:test';",
  "import assert from 'node:assert';",
  "import { sum } from '../src/sum.js';",
  '',
  "test('adds', () => {",
  '  assert.strictEqual(sum(1, 2), 3);',
  '});',
  '',
].join('\n');
const FILE = 'test/sum.test.js';
const lines = JS.split('\n');
const insertAt = (n: number, text: string): string =>
  [...lines.slice(0, n), text, ...lines.slice(n)].join('\n');

describe('an existing test file: the ways to weaken it without touching an assertion', () => {
  it.each([
    ['neutralises the assertion', insertAt(3, 'assert.strictEqual = () => {};'), 'line 4 added'],
    [
      'mocks the module under test',
      insertAt(3, "jest.mock('../src/sum.js', () => ({ sum: () => 3 }));"),
      'line 4 added',
    ],
    [
      "mocks it with node:test's mock",
      insertAt(3, "import { mock } from 'node:test';\nmock.method(calc, 'sum', () => 3);"),
      'line 4 added',
    ],
    ['skips with skipIf', JS.replace("test('adds'", "test.skipIf(true)('adds'"), 'line 5 changed'],
    [
      'skips with an option',
      JS.replace("test('adds', () => {", "test('adds', { skip: true }, () => {"),
      'line 5 changed',
    ],
    ['returns early', insertAt(5, '  return;'), 'line 6 added'],
  ])('%s: a finding naming the line, none with testsChange', (_what, changed, where) => {
    const { changes, diff } = story({ [FILE]: JS }, { [FILE]: changed });
    const found = oracleFindings({
      changes,
      diff,
      baselinePassed: null,
      currentPassed: null,
      testsChange: false,
    });
    expect(found).toEqual([
      expect.stringMatching(
        new RegExp(
          `^existing test changed in test/sum\\.test\\.js, which existed before the story: ${where}`,
        ),
      ),
    ]);
    expect(
      oracleFindings({
        changes,
        diff,
        baselinePassed: null,
        currentPassed: null,
        testsChange: true,
      }),
    ).toEqual([]);
  });

  it('the same lines appended at the end of the file are not new tests either', () => {
    for (const tail of [
      'assert.strictEqual = () => {};',
      "jest.mock('../src/sum.js', () => ({ sum: () => 3 }));",
      "test.skipIf(true)('x', () => {});",
      "describe('more', () => { assert.strictEqual = () => {}; });",
      'beforeEach(() => { assert.strictEqual = () => {}; });',
      "test('x', () => {}, (assert.strictEqual = () => {}));",
      "test('x', () => {}); assert.strictEqual = () => {};",
      'test(String((assert.strictEqual = () => {})), () => {});',
      // Brackets hidden in a regular expression could hide a statement after the test.
      "test('x', () => { /{/.test('{'); });\nassert.strictEqual = () => {};\n/}/;",
    ]) {
      expect(findings({ [FILE]: JS }, { [FILE]: `${JS}${tail}\n` })).toEqual([
        expect.stringContaining('appended, '),
      ]);
    }
  });
});

describe('new tests appended to an existing file', () => {
  it('pass: top-level test(…)/it(…) calls after the last line', () => {
    const added = [
      '',
      "test('adds negatives', () => {",
      '  assert.strictEqual(sum(-1, -2), -3);',
      "  const s = `a ${sum(1, 1)} }`; // a brace in a template: '}'",
      '});',
      '',
      "it('adds zero', async (t) => { assert.strictEqual(sum(0, 0), 0); });",
      '',
    ].join('\n');
    expect(findings({ [FILE]: JS }, { [FILE]: `${JS}${added}` })).toEqual([]);
  });

  it('pass after a last line that had no newline', () => {
    const base = JS.trimEnd();
    const added =
      "\n\ntest('adds negatives', () => {\n  assert.strictEqual(sum(-1, -2), -3);\n});\n";
    expect(findings({ [FILE]: base }, { [FILE]: `${base}${added}` })).toEqual([]);
  });

  it('inside an existing describe is a change of it', () => {
    const base =
      "describe('sum', () => {\n  it('adds', () => {\n    expect(sum(1, 2)).toBe(3);\n  });\n});\n";
    const changed = base.replace(
      '  });\n});',
      "  });\n  it('more', () => {\n    expect(sum(2, 2)).toBe(4);\n  });\n});",
    );
    expect(findings({ 'src/sum.test.ts': base }, { 'src/sum.test.ts': changed })).toEqual([
      expect.stringContaining('line 5 added inside the existing tests'),
    ]);
  });

  it('Python: top-level def test_… only; decorators and statements are refused', () => {
    const base = 'from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n';
    const file = 'tests/test_calc.py';
    expect(
      findings(
        { [file]: base },
        { [file]: `${base}\n\ndef test_neg(tmp_path):\n    assert add(-1, -2) == -3\n` },
      ),
    ).toEqual([]);
    for (const tail of [
      '@pytest.fixture(autouse=True)\ndef fake(monkeypatch):\n    monkeypatch.setattr("calc.add", lambda a, b: 3)\n',
      'import calc\ncalc.add = lambda a, b: 3\n',
      '    return\n',
      'def test_x(a=setattr(calc, "add", None)):\n    pass\n',
    ]) {
      expect(findings({ [file]: base }, { [file]: `${base}${tail}` })).toEqual([
        expect.stringContaining('appended, '),
      ]);
    }
    expect(
      findings(
        { [file]: base },
        { [file]: base.replace('def test_add():\n', 'def test_add():\n    return\n') },
      ),
    ).toEqual([expect.stringContaining('line 4 added inside the existing tests: return')]);
  });

  it('Go: func TestX(t *testing.T) only; init and TestMain are refused', () => {
    const base =
      'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("add")\n\t}\n}\n';
    const file = 'calc_test.go';
    expect(
      findings(
        { [file]: base },
        {
          [file]: `${base}\nfunc TestNeg(t *testing.T) {\n\tif Add(-1, -2) != -3 / 1 {\n\t\tt.Fatal("}")\n\t}\n}\n`,
        },
      ),
    ).toEqual([]);
    for (const tail of [
      'func init() { skipAll = true }\n',
      'func TestMain(m *testing.M) { os.Exit(0) }\n',
      'var _ = func() int { return 0 }()\n',
    ]) {
      expect(findings({ [file]: base }, { [file]: `${base}${tail}` })).toEqual([
        expect.stringContaining('appended, '),
      ]);
    }
  });

  it('other languages: any appended line is a change', () => {
    const base = "describe 'sum' do\n  it { expect(sum(1, 2)).to eq 3 }\nend\n";
    expect(
      findings(
        { 'spec/sum_spec.rb': base },
        { 'spec/sum_spec.rb': `${base}it { expect(1).to eq 1 }\n` },
      ),
    ).toEqual([expect.stringContaining('new tests are appended only to')]);
  });
});

describe('whole existing test files', () => {
  it('deleting or renaming one is a finding; a new test file and a mode change are not', () => {
    expect(findings({ [FILE]: JS }, { [FILE]: null })).toEqual([`test file deleted: ${FILE}`]);
    const renamed = story({ [FILE]: JS }, { [FILE]: null, 'test/total.test.js': JS });
    expect(existingTestFindings(renamed.changes, renamed.diff)).toEqual([
      `test file deleted: ${FILE}`,
    ]);
    expect(findings({ [FILE]: JS }, { 'test/new.test.js': 'anything at all\n' })).toEqual([]);
    const mode = story({ [FILE]: JS }, {}, [FILE]);
    expect(mode.changes).toEqual([{ path: FILE, status: 'modified' }]);
    expect(mode.diff).toContain('new mode 100755');
    expect(existingTestFindings(mode.changes, mode.diff)).toEqual([]);
  });

  it('reads lines that look like diff headers as lines, and files whose names git quotes', () => {
    const sql = 'test/fixtures/schema.sql';
    expect(
      findings(
        { [sql]: '-- users\nCREATE TABLE u (id int);\n' },
        { [sql]: 'CREATE TABLE u (id int);\n' },
      ),
    ).toEqual([expect.stringContaining('line 1 changed or removed (old line): -- users')]);
    const odd = 'test/café "x".test.js';
    expect(findings({ [odd]: JS }, { [odd]: insertAt(5, '  return;') })).toEqual([
      expect.stringContaining(`existing test changed in ${odd}`),
    ]);
  });

  it('rewriting an assertion to what the code does is a finding naming the old line, none with testsChange', () => {
    // The code cannot be fixed, so the test is made to say what it does: the gate goes green.
    const { changes, diff } = story(
      { [FILE]: JS },
      { [FILE]: JS.replace('sum(1, 2), 3)', 'sum(1, 2), -1)') },
    );
    const input = { changes, diff, baselinePassed: 1, currentPassed: 1 };
    expect(oracleFindings({ ...input, testsChange: false })).toEqual([
      `existing test changed in ${FILE}, which existed before the story: line 6 changed or removed (old line): assert.strictEqual(sum(1, 2), 3);; line 6 added inside the existing tests: assert.strictEqual(sum(1, 2), -1);`,
    ]);
    expect(oracleFindings({ ...input, testsChange: true })).toEqual([]);
  });

  it('names at most three lines of a file and counts the rest', () => {
    const changed = JS.replace(/assert/g, 'ok').replace(/sum/g, 'add');
    const [finding] = findings({ [FILE]: JS }, { [FILE]: changed });
    expect(finding?.match(/; line \d+ /g)?.length).toBe(2);
    expect(finding).toMatch(/; and \d+ more line\(s\)$/);
  });
});

describe('a story run', () => {
  const TEST = [
    "import { test } from 'node:test';",
    "import assert from 'node:assert';",
    "import { calc } from '../src/calc.js';",
    '',
    "test('adds', () => {",
    '  assert.strictEqual(calc.sum(1, 2), 3);',
    '});',
    '',
  ].join('\n');
  const at = (n: number, ...text: string[]): string => {
    const l = TEST.split('\n');
    return [...l.slice(0, n), ...text, ...l.slice(n)].join('\n');
  };
  // It keeps the gate green: only the guard can tell. The other ways to weaken a test are
  // the rule's own cases above, on real diffs; here the guard's finding fails a story.
  const MOCKED = at(3, "import { mock } from 'node:test';", "mock.method(calc, 'sum', () => 3);");
  const APPENDED = `${TEST}test('adds negatives', () => {\n  assert.strictEqual(calc.sum(-1, -2), -3);\n});\n`;

  it('fails a sabotage of an existing test without testsChange and takes it with; takes a new test appended', async () => {
    repo = makeRepo({
      'package.json': '{"type":"module"}\n',
      'src/calc.js': 'export const calc = { sum: (a, b) => a + b };\n',
      'test/mock.test.js': TEST,
      'test/append.test.js': TEST,
    });
    const r = repo;
    const sabotage = { '*': { write: { 'test/mock.test.js': MOCKED } } };
    const coder = scriptedCoder(r, 'coder', {
      append: { '*': { write: { 'test/append.test.js': APPENDED } } },
      mock: sabotage,
      'allowed-mock': sabotage,
    });
    r.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['node --test'],
        fixRounds: 0,
      }),
    );
    r.commit('config');
    const refused = await run(
      r,
      planMarkdown([
        { id: 'mock', owns: ['test/mock.test.js'] },
        { id: 'append', owns: ['test/append.test.js'] },
      ]),
    );
    expect(refused.code).toBe(1);
    expect(record(r, 'mock')).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining(
        'existing test changed in test/mock.test.js, which existed before the story: line 4 added',
      ),
    });
    expect(record(r, 'append')).toMatchObject({ status: 'done' });
    expect(epicMerges(r)).toEqual(['Merge story append: Story append']);

    // The plan's leave: the same change is taken.
    const allowed = await run(
      r,
      planMarkdown([{ id: 'allowed-mock', owns: ['test/mock.test.js'], testsChange: true }]),
      { epic: 'allowed' },
    );
    expect(allowed.code).toBe(0);
    expect(git(r.dir, 'show', 'epic/allowed:test/mock.test.js')).toContain('mock.method(calc');
  });
});
