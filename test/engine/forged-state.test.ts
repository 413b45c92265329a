import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  configYaml,
  copyLink,
  copyRepo,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type TestRepo,
} from './support/repo.js';
import { bundledEntry } from '../support/bundled-entry.js';

// Without an agent user, the agent runs as epicflow's own user and can write the state
// folder between two runs. What it could write there must not decide what the next run
// skips or forgives.

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..');
// The crash child bundled once for the whole run (test/support/bundled-entry.ts): started
// with `--import tsx` it would transpile the sources again at each start.
let child: string;
beforeAll(async () => {
  child = await bundledEntry(join(here, 'support', 'crash-child.ts'));
});

let repo: TestRepo;
// The crashed epic the file shares is removed after all its tests.
afterEach(() => {
  if (repo !== crashed) repo?.cleanup();
});

/** Runs `epicflow run` in a child killed with SIGKILL at `point` of story `story`. */
function crashAt(point: string, story: string, file: string): void {
  const killed = spawnSync(process.execPath, [child, file, repo.dir], {
    cwd: projectRoot,
    env: { ...process.env, EPICFLOW_TEST_CRASH_AT: `${point}:${story}` },
    encoding: 'utf8',
  });
  expect(killed.signal).toBe('SIGKILL');
}

function forgeRecord(story: string, fields: Record<string, unknown>): void {
  const path = join(stateDir(repo), 'stories', `${story}.json`);
  const like = record(repo, 'a');
  writeFileSync(path, JSON.stringify({ ...like, story, notes: [], ...fields }, null, 2));
}

/**
 * Story a crashed after its commit, b never ran, made once for the records forged on it:
 * each test forges and runs again in a copy (`copyRepo`), its coder named through `link`.
 */
const link = copyLink();
let crashed: TestRepo | undefined;
afterAll(() => {
  crashed?.cleanup();
  link.cleanup();
});
const TWO = planMarkdown([
  { id: 'a', owns: ['src/a.txt'] },
  { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
]);

describe('state an agent running as the user could have written', () => {
  beforeAll(() => {
    repo = makeRepo({ 'README.md': 'x\n' });
    crashed = repo;
    link.use(repo);
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: link.through(repo, coder) }],
        gates: ['true'],
      }),
    );
    repo.commit('config');
    const file = join(repo.tmp, 'epic.md');
    writeFileSync(file, TWO);
    crashAt('after-commit', 'a', file);
  });

  it.each([
    ['names a merge that is not on the epic branch', true],
    ['says done without a merge', false],
  ])('a done record that %s does not skip its story', async (_name, withMerge) => {
    if (crashed === undefined) throw new Error('the crashed epic was not made');
    repo = copyRepo(crashed);
    link.use(repo);

    // b never ran; a record now says it is done.
    const someCommit = git(repo.dir, 'rev-parse', 'HEAD');
    forgeRecord('b', {
      status: 'done',
      ...(withMerge ? { mergeCommit: someCommit, storyCommit: someCommit } : {}),
    });

    const rerun = await run(repo, TWO);
    expect(rerun.code).toBe(0);
    expect(prompts(repo, 'coder').map((p) => p.story)).toEqual(['a', 'b']);
    expect(epicMerges(repo)).toEqual(['Merge story a: Story a', 'Merge story b: Story b']);
    expect(showFile(repo, 'epic/epic', 'src/b.txt')).toBe('b');
    expect(record(repo, 'b')).toMatchObject({ status: 'done' });
    expect(rerun.stdout).toMatch(/\[b\] its record .* run again/);
  });

  it('a link planted at events.jsonl is refused with a clear error, and nothing is written through it', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const victim = join(repo.tmp, 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    mkdirSync(stateDir(repo), { recursive: true });
    const events = join(stateDir(repo), 'events.jsonl');
    symlinkSync(victim, events);

    const result = await run(repo, planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `refusing to append to ${events}: ${events} is a symbolic link, not epicflow's own file`,
    );
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
  });

  it('a stored gate baseline that excuses the failure is not used: the gate is run again on the base', async () => {
    repo = makeRepo({
      'README.md': 'x\n',
      'check.sh': 'if grep -qs bad src/a.txt; then echo "FAIL: a.txt holds bad work"; exit 1; fi\n',
    });
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'bad\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['sh check.sh'],
        fixRounds: 0,
      }),
    );
    repo.commit('config');
    const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
    const file = join(repo.tmp, 'epic.md');
    writeFileSync(file, plan);
    crashAt('after-commit', 'a', file);

    // The stored baseline of the base now says the gate failed there the same way.
    const baselines = join(stateDir(repo), 'baselines');
    const names = readdirSync(baselines);
    expect(names).toHaveLength(1);
    const path = join(baselines, names[0]!);
    const stored = JSON.parse(readFileSync(path, 'utf8')) as { command: string }[];
    expect(stored.map((r) => r.command)).toEqual(['sh check.sh']);
    writeFileSync(
      path,
      JSON.stringify(
        stored.map((r) => ({
          command: r.command,
          ok: false,
          output: 'FAIL: a.txt holds bad work\n',
        })),
      ),
    );

    const rerun = await run(repo, plan);
    expect(rerun.code).toBe(1);
    expect(record(repo, 'a')).toMatchObject({ status: 'failed' });
    expect(showFile(repo, 'epic/epic', 'src/a.txt')).toBeNull();
    expect(epicMerges(repo)).toEqual([]);
  });
});
