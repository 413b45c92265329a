import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
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

describe('safety', () => {
  it('an index flag the coder set hides nothing from the checks: its edit of the gate is seen and put back', async () => {
    repo = makeRepo({
      'README.md': 'x\n',
      'check.sh': 'test ! -e src/a.txt || grep -q good src/a.txt\n',
    });
    // The gate would fail on what it wrote; so it makes the gate pass, and hides that
    // edit from `git add` with skip-worktree (as epicflow's own user, it can write the index).
    const hide = [
      'printf "exit 0\\n" > check.sh',
      'git update-index --skip-worktree check.sh',
    ].join('; ');
    const coder = scriptedCoder(repo, 'coder', {
      cheat: { '*': { sh: [hide], write: { 'src/a.txt': 'bad\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['sh check.sh'],
        fixRounds: 0,
      }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 'cheat', owns: ['src/a.txt'] }]));
    // The edit is in what the checks judge (shown to the coder, then put back) …
    expect(result.stdout).toContain('[cheat] changes outside its perimeter: check.sh');
    expect(String(record(repo, 'cheat').notes)).toContain(
      'restored outside its perimeter: check.sh',
    );
    // … and the gate, as the repository has it, keeps the bad work out.
    expect(result.code).toBe(1);
    expect(record(repo, 'cheat')).toMatchObject({ status: 'failed' });
    expect(showFile(repo, 'epic/epic', 'src/a.txt')).toBeNull();
  });

  it('never runs git hooks a coder plants', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const marker = join(repo.tmp, 'hook-ran');
    const hook = `#!/bin/sh\\ntouch '${marker}'\\n`;
    const plant = [
      'hooks="$(git rev-parse --git-common-dir)/hooks"',
      'mkdir -p "$hooks"',
      `for h in pre-commit commit-msg post-commit pre-merge-commit post-merge post-checkout reference-transaction; do printf "${hook}" > "$hooks/$h"; chmod +x "$hooks/$h"; done`,
    ].join('; ');
    const coder = scriptedCoder(repo, 'coder', {
      plant: { '*': { sh: [plant], write: { 'src/plant.txt': 'x\n' } } },
      next: { '*': { write: { 'src/next.txt': 'x\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'plant', owns: ['src/plant.txt'] },
        { id: 'next', owns: ['src/next.txt'], dependsOn: ['plant'] },
      ]),
    );
    expect(result.code).toBe(0);
    expect(epicMerges(repo)).toHaveLength(2);
    expect(existsSync(marker)).toBe(false);
  });

  it('halts the epic when a coder moves the epic branch, merging nothing more', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      rogue: {
        '*': {
          write: { 'src/rogue.txt': 'x\n' },
          sh: [
            'git add -A && git -c user.name=r -c user.email=r@x commit -qm rogue --no-verify && git update-ref refs/heads/epic/epic HEAD',
          ],
        },
      },
      later: { '*': { write: { 'src/later.txt': 'x\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'rogue', owns: ['src/rogue.txt'] },
        { id: 'later', owns: ['src/later.txt'], dependsOn: ['rogue'] },
      ]),
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'epicflow: stopped launching stories: epic/epic was moved outside epicflow',
    );
    expect(record(repo, 'rogue')).toMatchObject({ status: 'failed' });
    expect(String(record(repo, 'rogue').reason)).toMatch(
      /^not merged: epic\/epic was moved outside epicflow/,
    );
    const report = reportJson(repo);
    expect(report.halts).toEqual([expect.objectContaining({ kind: 'outside-change' })]);
    expect(epicMerges(repo)).toEqual([]);
    // epicflow left the moved branch alone (nothing lost) and merged nothing onto it.
    expect(git(repo.dir, 'log', '-1', '--format=%s', 'epic/epic')).toBe('rogue');
    expect(showFile(repo, 'epic/epic', 'src/later.txt')).toBeNull();
  });
});

describe('resume', () => {
  it('restarts only the story whose plan entry changed, from the epic head', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      keep: { '*': { write: { 'src/keep.txt': 'x\n' } } },
      redo: { '*': { write: { 'src/redo.txt': 'x\n' }, exit: 1 } },
    });
    repo.write(
      'epicflow.yml',
      // A failed turn fails redo at once: no retries of a crash (transient faults'
      // retries are test/engine/transient.test.ts's).
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['true'],
        extra: 'retries: { transient: 0 }',
      }),
    );
    repo.commit('config');
    const stories = [
      { id: 'keep', owns: ['src/keep.txt'] },
      { id: 'redo', owns: ['src/redo.txt'] },
    ];
    const first = await run(repo, planMarkdown(stories));
    expect(first.code).toBe(1);
    expect(record(repo, 'redo')).toMatchObject({ status: 'failed', attempt: 1 });
    const oldBranch = git(repo.dir, 'rev-parse', 'story/epic/redo');

    // The same executor, now scripted to succeed.
    scriptedCoder(repo, 'coder', {
      keep: { '*': { write: { 'src/keep.txt': 'x\n' } } },
      redo: { '*': { write: { 'src/redo.txt': 'new\n' } } },
    });
    const second = await run(
      repo,
      planMarkdown([
        stories[0] as { id: string; owns: string[] },
        { id: 'redo', owns: ['src/redo.txt'], description: 'Build redo, better.' },
      ]),
    );
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('[keep] already merged; skipping');
    expect(second.stdout).toContain(
      '[redo] plan entry changed since its branch was created: starting over from the epic head',
    );
    expect(record(repo, 'redo')).toMatchObject({ status: 'done', attempt: 2 });
    // The new branch started from the epic head: the old attempt's commits are not in it.
    expect(() =>
      git(repo.dir, 'merge-base', '--is-ancestor', oldBranch, 'story/epic/redo'),
    ).toThrow();
    expect(epicMerges(repo)).toEqual([
      'Merge story keep: Story keep',
      'Merge story redo: Story redo',
    ]);
  });
});
