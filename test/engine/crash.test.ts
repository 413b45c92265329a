import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRASH_POINTS } from '../../src/engine/ports.js';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  showFile,
  type TestRepo,
} from './support/repo.js';
import { bundledEntry } from '../support/bundled-entry.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..');
// The crash child bundled once for the whole run (test/support/bundled-entry.ts): started
// with `--import tsx` it would transpile the sources again at each start.
let child: string;
beforeAll(async () => {
  child = await bundledEntry(join(here, 'support', 'crash-child.ts'));
});

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const a = { id: 'a', owns: ['src/a.txt'] };
const b = { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] };
// Where the crash leaves the epic branch itself mid-way (a merge started, or made and not yet
// recorded), the rerun goes on to a story that merges after it, b, which waits for a. At the
// other points the crash leaves only a's own branch, tree and record behind: the rerun
// finishing a is what they show, and b would be one more story job on the same epic branch.
const onEpicBranch: readonly string[] = ['mid-merge', 'after-merge'];

describe('a crash at any lifecycle point is recovered by a rerun', () => {
  // `after-task` comes only in a story run as a task plan: test/engine/tasks.test.ts.
  it.each(CRASH_POINTS.filter((p) => p !== 'after-task').map((p) => [p]))(
    'SIGKILL %s, then rerun: one merge per story, no coder turn paid again',
    async (point) => {
      repo = makeRepo({ 'README.md': 'original\n' });
      // Story a also strays outside its perimeter, so that paths get restored.
      const coder = scriptedCoder(repo, 'coder', {
        a: { '*': { write: { 'src/a.txt': 'a\n', 'README.md': 'stray\n' } } },
        b: { '*': { write: { 'src/b.txt': 'b\n' } } },
      });
      repo.write(
        'epicflow.yml',
        configYaml({
          executors: [{ id: 'bot', command: coder }],
          gates: ['test -f README.md'],
          setup: 'true',
        }),
      );
      repo.commit('config');
      const file = join(repo.tmp, 'epic.md');
      const stories = onEpicBranch.includes(point) ? [a, b] : [a];
      const plan = planMarkdown(stories);
      writeFileSync(file, plan);

      const crashed = spawnSync(process.execPath, [child, file, repo.dir], {
        cwd: projectRoot,
        env: { ...process.env, EPICFLOW_TEST_CRASH_AT: `${point}:a` },
        encoding: 'utf8',
      });
      expect(crashed.signal).toBe('SIGKILL');
      expect(crashed.stdout).not.toContain('report:');

      const rerun = await run(repo, plan);
      expect(rerun.stderr).toBe('');
      expect(rerun.code).toBe(0);
      expect(epicMerges(repo)).toEqual(stories.map((s) => `Merge story ${s.id}: Story ${s.id}`));
      for (const s of stories) expect(record(repo, s.id)).toMatchObject({ status: 'done' });
      // Done, however the rerun found it (a merge made before the crash is recorded as it
      // found it): nothing of the attempt's way there is kept for a later run to resume from.
      expect(record(repo, 'a')).not.toHaveProperty('progress');
      // A resumed story does not pay for a coder turn again: a's two turns (the second one
      // shown its strays) are a run's without a crash. Killed mid-turn, the turn may or may
      // not have logged its prompt.
      if (point !== 'mid-coder') {
        expect(prompts(repo, 'coder').filter((p) => p.story === 'a')).toHaveLength(2);
      }
      expect(showFile(repo, 'epic/epic', 'README.md')).toBe('original');
      expect(showFile(repo, 'epic/epic', 'src/a.txt')).toBe('a');
    },
  );
});
