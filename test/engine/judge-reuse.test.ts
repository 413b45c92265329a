/**
 * A rerun does not pay for the judge again over a diff it already judged: the verdict is
 * kept in the story's record with the fingerprint of what the judge read, and the first
 * judge call of a later run reuses it when nothing it reads changed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CLEARED_VERDICT,
  configYaml,
  copyLink,
  copyRepo,
  epicMerges,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';
import { bundledEntry } from '../support/bundled-entry.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..');
// The crash child bundled once for the whole run (test/support/bundled-entry.ts): started
// with `--import tsx` it would transpile the sources again at each start.
let crashChild: string;
beforeAll(async () => {
  crashChild = await bundledEntry(join(here, 'support', 'crash-child.ts'));
});

const PLAN = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/**
 * The story crashed in its merge, after the judge cleared it, made once for the file: what a
 * test checks is the run after it, so each runs again in a copy of it (`copyRepo`), its coder
 * and judge named through `link`.
 */
const link = copyLink();
let crashed: TestRepo | undefined;
afterAll(() => {
  crashed?.cleanup();
  link.cleanup();
});

beforeAll(() => {
  const made = makeRepo({ 'README.md': 'x\n' });
  crashed = made;
  link.use(made);
  const coder = scriptedCoder(made, 'coder', { s: { '*': { write: { 'src/s.txt': 's\n' } } } });
  const judge = scriptedCoder(made, 'reviewer', { s: { '*': { stdout: CLEARED_VERDICT } } });
  made.write(
    'epicflow.yml',
    configYaml({
      executors: [
        { id: 'coder', command: link.through(made, coder) },
        { id: 'reviewer', command: link.through(made, judge), roles: ['judge'] },
      ],
      gates: ['true'],
      extra: `judge: { executor: reviewer, rounds: 2 }`,
    }),
  );
  made.write('CONTRIBUTING.md', 'Be kind.\n');
  made.commit('config');
  const file = join(made.tmp, 'epic.md');
  writeFileSync(file, PLAN);
  const child = spawnSync(process.execPath, [crashChild, file, made.dir], {
    cwd: projectRoot,
    env: { ...process.env, EPICFLOW_TEST_CRASH_AT: 'mid-merge:s' },
    encoding: 'utf8',
  });
  expect(child.signal).toBe('SIGKILL');
  expect(prompts(made, 'reviewer')).toHaveLength(1);
});

/** `repo` a copy of the crashed story, its coder and judge logging there. */
function copyCrashed(): void {
  if (crashed === undefined) throw new Error('the crashed story was not made');
  repo = copyRepo(crashed);
  link.use(repo);
}

describe('a judged story run again', () => {
  it('reuses the verdict over the same diff: the judge is asked once in two runs', async () => {
    copyCrashed();
    expect(prompts(repo, 'reviewer')).toHaveLength(1);
    const rerun = await run(repo, PLAN);
    expect(rerun.code).toBe(0);
    expect(prompts(repo, 'reviewer')).toHaveLength(1);
    expect(prompts(repo, 'coder')).toHaveLength(1);
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    expect(rerun.stdout).toContain('[s] judge round 1: reused the verdict for an unchanged diff');
    expect(record(repo, 's').notes).toContain(
      'judge round 1: reused the verdict for an unchanged diff',
    );
  });

  it('asks again when what the judge reads changed (here, the house rules)', async () => {
    copyCrashed();
    repo.write('CONTRIBUTING.md', 'Be strict.\n');
    repo.commit('stricter rules');
    const rerun = await run(repo, PLAN);
    expect(rerun.code).toBe(0);
    expect(prompts(repo, 'reviewer')).toHaveLength(2);
    expect(rerun.stdout).not.toContain('reused the verdict');
  });

  it('asks again when the kept verdict was rewritten: a record the agent forged is a miss', async () => {
    copyCrashed();
    // The key the verdict is sealed with is epicflow's alone, made once for the repository.
    const keyFile = join(repo.dir, '.git', 'epicflow', 'answer-key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile);
    // An agent running as the user rewrites the kept verdict, keeping its fingerprint.
    const path = join(stateDir(repo), 'stories', 's.json');
    const kept = JSON.parse(readFileSync(path, 'utf8')) as {
      judged: { answer: { findings: string[] } };
    };
    kept.judged.answer.findings = ['FORGED: the judge never said this'];
    writeFileSync(path, JSON.stringify(kept, null, 2));
    const rerun = await run(repo, PLAN);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).not.toContain('reused the verdict');
    expect(prompts(repo, 'reviewer')).toHaveLength(2);
    expect(JSON.stringify(record(repo, 's'))).not.toContain('FORGED');
    expect(readFileSync(keyFile)).toEqual(key);
  });
});
