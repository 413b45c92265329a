/**
 * Only the commit that was checked is merged. Code epicflow does not trust runs
 * after the perimeter was read — the gates, a judge's tools, a process the agent
 * left behind — and each tries to get an unchecked change merged: a commit
 * outside the perimeter, an edit of a file. None of it reaches the epic branch,
 * and each is named on the story.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLEARED_VERDICT,
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  record,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** A commit of an outside file, as an attacker inside the tree would make it. */
const SNEAK = [
  'echo pwned > OUTSIDE.md',
  'git add -A',
  'git -c user.name=x -c user.email=x@x -c core.hooksPath=/dev/null commit -qm sneak --no-verify',
].join(' && ');

const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

function notes(): string[] {
  return (record(repo, 's')['notes'] as string[]) ?? [];
}

describe('the commit that was checked is the commit that is merged', () => {
  it('a gate that commits outside the perimeter: its commit is discarded and named', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { write: { 'src/s.txt': 'v1\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: [SNEAK] }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    expect(showFile(repo, 'epic/epic', 'src/s.txt')).toBe('v1');
    expect(showFile(repo, 'epic/epic', 'OUTSIDE.md')).toBeNull();
    expect(showFile(repo, 'story/epic/s', 'OUTSIDE.md')).toBeNull();
    const checked = record(repo, 's')['storyCommit'] as string;
    expect(git(repo.dir, 'rev-parse', 'epic/epic^2')).toBe(checked);
    expect(notes()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^the gates committed [0-9a-f]{12}: discarded \\(checked as ${checked.slice(0, 12)}\\)$`,
          ),
        ),
      ]),
    );
  });

  it('a gate that rewrites a checked file: it rewrote its own checkout, the merged file is what was checked', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { write: { 'src/s.txt': 'v1\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['echo tampered > src/s.txt'],
      }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(showFile(repo, 'epic/epic', 'src/s.txt')).toBe('v1');
    // The gates ran on a checkout of the commit, removed after them: the story's tree and
    // branch never saw the change.
    expect(git(repo.dir, 'rev-parse', 'epic/epic^2')).toBe(record(repo, 's')['storyCommit']);
    expect(notes().filter((n) => n.startsWith('the gates'))).toEqual([]);
  });

  it('a process the agent left behind, outside its group and marker, commits during the gates: not merged', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const go = join(repo.tmp, 'gates-started');
    const done = join(repo.tmp, 'sneaked');
    const ready = join(repo.tmp, 'left-behind');
    // It waits for the gates to start, then commits an outside file in the story's tree. The
    // turn ends once it runs with its environment emptied (before that, its marker is still
    // in its environment, and the end of the turn would rightly kill it).
    const detached = `setsid env -i PATH="$PATH" sh -c 'touch ${ready}; while [ ! -e ${go} ]; do sleep 0.05; done; ${SNEAK.replace(/'/g, '')} && touch ${done}' >/dev/null 2>&1 & while [ ! -e ${ready} ]; do sleep 0.05; done`;
    const coder = scriptedCoder(repo, 'coder', {
      s: { '*': { write: { 'src/s.txt': 'v1\n' }, sh: [detached] } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        // On the story's commit (not the baseline's), the gate holds until the process committed
        // (up to a minute: a loaded machine starts it late).
        gates: [
          `if [ -e src/s.txt ]; then touch ${go}; for i in $(seq 1200); do [ -e ${done} ] && break; sleep 0.05; done; fi`,
        ],
      }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(existsSync(done)).toBe(true);
    expect(result.code).toBe(0);
    expect(showFile(repo, 'epic/epic', 'OUTSIDE.md')).toBeNull();
    expect(showFile(repo, 'epic/epic', 'src/s.txt')).toBe('v1');
    expect(notes()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^the gates committed [0-9a-f]{12}: discarded/),
      ]),
    );
  });

  it('a judge whose tools commit outside the perimeter: put back before the merge', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { write: { 'src/s.txt': 'v1\n' } } } });
    const judge = scriptedCoder(repo, 'judge', {
      s: { '*': { sh: [SNEAK], stdout: CLEARED_VERDICT } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'bot', command: coder },
          { id: 'reviewer', command: judge, roles: ['judge'] },
        ],
        gates: ['true'],
        extra: 'judge: { executor: reviewer, rounds: 1 }',
      }),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(showFile(repo, 'epic/epic', 'OUTSIDE.md')).toBeNull();
    expect(notes()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^the judge \(reviewer\) committed [0-9a-f]{12}: discarded/),
      ]),
    );
  });

  it('2,000 owned files whose listings are megabytes, and one change outside: only the owned ones are merged, the other is named', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // The coder writes its files with a script of its own (one process, not 2,000). Their
    // paths are about 900 bytes (three folders and a name of about 220 each), so every listing
    // of them (the tree, the changed paths) is past 1.5 MiB: a cut of git's output to its last
    // megabyte would lose the first files.
    const make = join(repo.tmp, 'make-many.mjs');
    writeFileSync(
      make,
      [
        "import { mkdirSync, writeFileSync } from 'node:fs';",
        "const long = (n) => 'x'.repeat(n);",
        'for (let d = 0; d < 20; d++) {',
        '  const n = String(d).padStart(3, "0");',
        '  const dir = `src/many/part-with-a-long-folder-name-${long(180)}-${n}/${long(210)}-${n}/${long(210)}-${n}`;',
        '  mkdirSync(dir, { recursive: true });',
        '  for (let f = 0; f < 100; f++) writeFileSync(`${dir}/generated-module-with-a-long-name-${long(180)}-${f}.txt`, `${d}-${f}\\n`);',
        '}',
        "writeFileSync('README.md', 'stray\\n');",
        '',
      ].join('\n'),
    );
    mkdirSync(join(repo.dir, 'src'), { recursive: true });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { sh: [`node ${make}`] } } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src/many'] }]));
    expect(result.code).toBe(0);
    expect(showFile(repo, 'epic/epic', 'README.md')).toBe('x');
    const listing = execFileSync('git', ['ls-tree', '-r', '-z', 'epic/epic', '--', 'src/many'], {
      cwd: repo.dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(listing.length).toBeGreaterThan(1.5 * 1024 * 1024);
    const changed = execFileSync('git', ['diff', '--name-only', '-z', 'main', 'epic/epic'], {
      cwd: repo.dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(changed.length).toBeGreaterThan(1.5 * 1024 * 1024);
    expect(
      listing
        .toString('utf8')
        .split('\0')
        .filter((e) => e !== ''),
    ).toHaveLength(2_000);
    expect(notes()).toContain('restored outside its perimeter: README.md');
    expect(reportJson(repo).stories[0]?.notes).toContain(
      'restored outside its perimeter: README.md',
    );
  }, 360_000);
});
