/**
 * A record marked `restart` (its plan entry changed after the story had
 * started, as the orchestrator writes it before a story job) already carries
 * the current plan hash and the attempt to run: the engine starts the story
 * from the epic head anyway, and keeps the attempt.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plan = planMarkdown([{ id: 'api', owns: ['src/api'] }]);

/**
 * A first run whose coder writes `old.txt` and fails, leaving a branch with
 * that work; then the record as a dispatch for attempt 2 leaves it.
 */
async function startedStory(marked: boolean): Promise<string> {
  repo = makeRepo({ 'README.md': 'x\n' });
  const coder = scriptedCoder(repo, 'coder', {
    api: { '*': { write: { 'src/api/old.txt': 'old\n' }, exit: 1 } },
  });
  repo.write(
    'epicflow.yml',
    // The failed turn fails the story at once: no retries of its crash.
    configYaml({
      executors: [{ id: 'bot', command: coder }],
      gates: ['true'],
      extra: 'retries: { transient: 0 }',
    }),
  );
  repo.commit('config');
  const first = await run(repo, plan);
  expect(first.code).toBe(1);
  expect(record(repo, 'api')).toMatchObject({ status: 'failed', attempt: 1 });
  const oldBranch = git(repo.dir, 'rev-parse', 'story/epic/api');
  expect(showFile(repo, oldBranch, 'src/api/old.txt')).toBe('old');

  const { reason: _r, finishedAt: _f, ...prior } = record(repo, 'api');
  const dispatched = {
    ...prior,
    status: 'active',
    attempt: 2,
    notes: ['a note of the old attempt'],
    startedAt: '2026-11-30T10:00:00.000Z',
    ...(marked ? { restart: 'fresh' } : {}),
  };
  writeFileSync(
    join(stateDir(repo), 'stories', 'api.json'),
    `${JSON.stringify(dispatched, null, 2)}\n`,
  );
  scriptedCoder(repo, 'coder', { api: { '*': { write: { 'src/api/new.txt': 'new\n' } } } });
  return oldBranch;
}

describe('a record marked restart', () => {
  it('starts the story from the epic head, keeps the attempt, and saves records without the marker', async () => {
    const oldBranch = await startedStory(true);
    const hash = record(repo, 'api')['planHash'];

    const second = await run(repo, plan);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(
      '[api] plan entry changed since its branch was created: starting over from the epic head',
    );
    expect(second.stdout).toContain('[api] branch story/epic/api created from epic/epic');
    expect(() =>
      git(repo.dir, 'merge-base', '--is-ancestor', oldBranch, 'story/epic/api'),
    ).toThrow();
    expect(showFile(repo, 'epic/epic', 'src/api/new.txt')).toBe('new');
    expect(showFile(repo, 'epic/epic', 'src/api/old.txt')).toBeNull();
    expect(epicMerges(repo)).toEqual(['Merge story api: Story api']);

    const saved = record(repo, 'api');
    expect(saved).toMatchObject({
      status: 'done',
      attempt: 2,
      planHash: hash,
      executors: ['bot'],
      notes: [],
    });
    expect(saved).not.toHaveProperty('restart');
  });

  it('is what restarts it: without the marker the same record resumes the old branch', async () => {
    const oldBranch = await startedStory(false);

    const second = await run(repo, plan);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('[api] resuming story/epic/api');
    expect(git(repo.dir, 'merge-base', '--is-ancestor', oldBranch, 'story/epic/api')).toBe('');
    expect(showFile(repo, 'epic/epic', 'src/api/old.txt')).toBe('old');
    expect(record(repo, 'api')).toMatchObject({
      status: 'done',
      attempt: 2,
      notes: ['a note of the old attempt'],
    });
  });
});
