import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('epicflow run: a chain', () => {
  it('builds a → b → c in order, merges each with trailers, and reruns idempotently', async () => {
    repo = makeRepo({ 'README.md': '# app\n' });
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
      c: { '*': { write: { 'src/c.txt': 'c\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['test -f README.md'] }),
    );
    repo.commit('config');
    const plan = planMarkdown([
      { id: 'a', owns: ['src/a.txt'] },
      { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
      { id: 'c', owns: ['src/c.txt'], dependsOn: ['b'] },
    ]);
    const first = await run(repo, plan);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('[a] gates passed');
    expect(first.stdout).toContain('[c] merged into epic/epic (bot)');
    expect(first.stdout).toMatch(/report:\s+.*report\.md/);
    expect(epicMerges(repo)).toEqual([
      'Merge story a: Story a',
      'Merge story b: Story b',
      'Merge story c: Story c',
    ]);
    const body = git(repo.dir, 'log', '-1', '--format=%B', 'epic/epic');
    expect(body).toContain('Epicflow-Story: c');
    expect(body).toContain('Epicflow-Executor: bot');
    expect(showFile(repo, 'epic/epic', 'src/c.txt')).toBe('c');
    // b saw a's file in its worktree: it started after a merged.
    const bPrompt = prompts(repo, 'coder').find((p) => p.story === 'b');
    expect(bPrompt?.prompt).toContain('`src/a.txt` — story a (a dependency, already merged');
    // The user's checkout is untouched.
    expect(git(repo.dir, 'branch', '--show-current')).toBe('main');
    expect(git(repo.dir, 'status', '--porcelain')).toBe('');
    expect(record(repo, 'c')).toMatchObject({
      status: 'done',
      executors: ['bot'],
      branch: 'story/epic/c',
    });
    const events = readFileSync(join(stateDir(repo), 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { story?: string; message: string; kind: string });
    expect(events).toContainEqual(
      expect.objectContaining({ story: 'b', kind: 'story', message: 'gates passed' }),
    );
    const report = reportJson(repo);
    expect(report.stories.map((s) => s.status)).toEqual(['done', 'done', 'done']);

    const again = await run(repo, plan);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('[a] already merged; skipping');
    expect(epicMerges(repo)).toHaveLength(3);
    expect(prompts(repo, 'coder')).toHaveLength(3);
  });
});
