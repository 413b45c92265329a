/**
 * A story that proves too big, on this machine: its coder turn times out, the run ends
 * with a split drafted by the (scripted) planner and kept as a proposal, the plan file is
 * untouched until `epicflow plan approve`, which puts the smaller stories in its place;
 * the next run builds them.
 */
import { afterEach, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/program.js';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const SPLIT = [
  'The story is too big; here it is in two.',
  '',
  '```epicflow',
  'stories:',
  '  - id: one',
  '    title: First half',
  '    description: Write src/big/one.txt.',
  '    owns: [src/big/one.txt]',
  '    acceptance: ["src/big/one.txt exists"]',
  '  - id: two',
  '    title: Second half',
  '    description: Write src/big/two.txt.',
  '    dependsOn: [one]',
  '    owns: [src/big/two.txt]',
  '    acceptance: ["src/big/two.txt exists"]',
  '```',
  '',
].join('\n');

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    readStdin: async () => '',
    cwd: repo.tmp,
  });
  return { code, stdout, stderr };
}

it('a timed-out story gets a split proposed, and the plan changes only once it is approved', async () => {
  repo = makeRepo({ 'README.md': '# readme\n' });
  const coder = scriptedCoder(repo, 'coder', {
    // The first attempt of `big` takes longer than the story timeout.
    big: { '*': { sh: ['sleep 30'] } },
    'big-one': { '*': { write: { 'src/big/one.txt': 'one\n' } } },
    'big-two': { '*': { write: { 'src/big/two.txt': 'two\n' } } },
    after: { '*': { write: { 'src/after.txt': 'after\n' } } },
  });
  const planner = scriptedCoder(repo, 'planner', { plan: { '*': { stdout: SPLIT } } });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [
        { id: 'coder', command: coder },
        { id: 'thinker', command: planner, roles: ['planner'] },
      ],
      gates: ['true'],
      extra: 'timeouts: { story: 2s }',
    }),
  );
  repo.commit('config');
  const plan = planMarkdown([
    { id: 'big', owns: ['src/big'] },
    { id: 'after', owns: ['src/after.txt'], dependsOn: ['big'] },
  ]);

  const first = await run(repo, plan);
  expect(first.code).not.toBe(0);
  const out = first.stdout + first.stderr;
  expect(out).toContain('split: big proved too big (its coder turn ran out of time)');
  expect(out).toContain('split: big → big-one, big-two is proposed in');
  expect(out).toContain('nothing changes until you approve it with `epicflow plan approve');
  const planFile = join(repo.tmp, 'epic.md');
  // Proposed, never applied: the plan file is as written.
  expect(readFileSync(planFile, 'utf8')).toBe(plan);
  const shown = readFileSync(join(stateDir(repo), 'splits.md'), 'utf8');
  expect(shown).toContain('## `big` (attempt 1) · proposed');
  expect(shown).toContain('id: big-one');
  expect(shown).toContain('dependsOn: [big-one]');

  const approved = await cli('plan', 'approve', 'epic.md', '--repo', repo.dir);
  expect(approved.stderr).toBe('');
  expect(approved.code).toBe(0);
  expect(approved.stdout).toContain('approved the split of big: big-one, big-two in its place');
  const written = readFileSync(planFile, 'utf8');
  expect(written).toMatch(/^# Test epic\n/);
  expect(written).not.toMatch(/id: big\n/);
  expect(written).toContain('dependsOn: [big-one, big-two]');
  // Approved once: nothing waits any more.
  const again = await cli('plan', 'approve', 'epic.md', '--repo', repo.dir);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain('no split proposal waits for approval for epic.md');

  const second = await run(repo, written);
  expect(second.stderr).toBe('');
  expect(second.code).toBe(0);
  expect(readFileSync(join(stateDir(repo), 'splits.md'), 'utf8')).toContain(
    '## `big` (attempt 1) · approved',
  );
});
