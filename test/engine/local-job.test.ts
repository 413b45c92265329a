/**
 * The local job shell every local command runs in (`epicflow run`, `plan draft`, `retro`,
 * `land`): whatever the recipe does, the job closes the one way — events written, scratch
 * trees gone, the epic's lock released last — and the next command can take the epic.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { localJob } from '../../src/jobs/local/local-job.js';
import { describeError } from '../../src/core/errors.js';
import type { EngineEvent } from '../../src/engine/ports.js';
import { makeRepo, stateDir, type TestRepo } from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const event = (message: string): EngineEvent => ({
  at: '2026-01-01T00:00:00.000Z',
  kind: 'epic',
  message,
});

describe('a local job', () => {
  it('closes the same way when its recipe fails: events written, scratch gone, lock released', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const hooks = { cwd: repo.dir, env: process.env };
    const shown: string[] = [];
    let scratch = '';
    const failed = await localJob(hooks, undefined, async (job) => {
      const folders = job.folders('epic');
      const store = await job.lock(folders);
      const emit = job.eventLog(store, (e) => shown.push(e.message));
      emit(event('first'));
      emit(event('second'));
      scratch = job.scratch(join(folders.state, 'work'));
      mkdirSync(join(scratch, 'tree'), { recursive: true });
      writeFileSync(join(scratch, 'tree', 'left.txt'), 'left behind\n');
      // What closes later than this step is still open while it runs.
      job.onClose(async () => {
        expect(existsSync(join(folders.state, 'lock'))).toBe(true);
        expect(existsSync(scratch)).toBe(true);
      });
      throw new Error('the recipe broke');
    }).catch((e: unknown) => e);

    expect(describeError(failed)).toContain('the recipe broke');
    expect(shown).toEqual(['first', 'second']);
    const lines = readFileSync(join(stateDir(repo), 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { message: string }).message)).toEqual([
      'first',
      'second',
    ]);
    expect(scratch).toContain(join(stateDir(repo), 'work'));
    expect(existsSync(scratch)).toBe(false);
    expect(existsSync(join(stateDir(repo), 'lock'))).toBe(false);

    // The next command takes the epic.
    const again = await localJob(hooks, undefined, async (job) => {
      await job.lock(job.folders('epic'));
      return 'taken';
    });
    expect(again).toBe('taken');
  });

  it('refuses a second job on the same epic while the first holds it', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const hooks = { cwd: repo.dir, env: process.env };
    const inner = await localJob(hooks, undefined, async (job) => {
      await job.lock(job.folders('epic'));
      return localJob(hooks, undefined, (other) => other.lock(other.folders('epic'))).catch(
        (e: unknown) => e,
      );
    });
    expect(describeError(inner)).toContain('this epic is already running');
  });

  it('finds its epic in the repository it was pointed at, and names the choices otherwise', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const hooks = { cwd: repo.tmp, env: process.env };
    const none = await localJob(hooks, 'repo', (job) => job.chosenEpic(undefined)).catch(
      (e: unknown) => e,
    );
    expect(describeError(none)).toContain(`no epic has run in ${repo.dir} yet`);
    for (const epic of ['one', 'two']) {
      mkdirSync(stateDir(repo, epic), { recursive: true });
      writeFileSync(join(stateDir(repo, epic), 'epic.json'), '{}\n');
    }
    const several = await localJob(hooks, 'repo', (job) => job.chosenEpic(undefined)).catch(
      (e: unknown) => e,
    );
    expect(describeError(several)).toContain('pick one with --epic ID: one, two');
    const two = await localJob(hooks, 'repo', (job) => job.chosenEpic('two'));
    expect(two.state).toBe(stateDir(repo, 'two'));
    expect(two.worktrees).toBe(join(repo.dir, '.git', 'epicflow', 'worktrees', 'two'));
    const outside = await localJob(hooks, undefined, async () => 'ran').catch((e: unknown) => e);
    expect(describeError(outside)).toContain(`not a git repository: ${repo.tmp}`);
  });
});
