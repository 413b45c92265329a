/**
 * Stalled turns, through `epicflow run`: a coder that goes silent is stopped after
 * `timeouts.silence` (not after the story's hour) and the next round is told so; a fix
 * round that changes nothing is not checked again; both count as failed rounds.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  record,
  prompts as promptsOf,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** The prompts the coder was given, in order. */
function prompts(): string[] {
  return promptsOf(repo, 'coder').map((p) => p.prompt);
}

describe('a stalled coder turn', () => {
  it('silent for timeouts.silence: stopped with what it started, and the next round delivers', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const marker = join(repo.tmp, 'still-running');
    const coder = scriptedCoder(repo, 'coder', {
      a: {
        // Prints nothing, and leaves a process behind that would say it outlived the turn. Its
        // sleep outlasts the test's timeout: a turn not stopped fails the test by hanging.
        '1': { sh: [`(sleep 3; touch '${marker}') & sleep 1000`] },
        '*': { write: { 'src/a.txt': 'a\n' } },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['true'],
        extra: 'timeouts: { silence: 1s }',
      }),
    );
    repo.commit('config');
    const r = await run(repo, planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain('[a] round 1 stalled (silence): no output for 1s; another round');
    expect(record(repo, 'a')['notes']).toContain('round 1 stalled (silence): no output for 1s');
    const [, second] = prompts();
    expect(second).toContain('## Your last turn stalled');
    expect(second).toContain('epicflow stopped it: no output for 1s.');
    expect(git(repo.dir, 'show', 'epic/epic:src/a.txt')).toBe('a');
    await new Promise((r) => setTimeout(r, 4000));
    expect(existsSync(marker)).toBe(false);
  }, 180_000);

  it('a fix round that changes nothing: not checked again, and the story fails as stalled', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      a: { '1': { write: { 'src/a.txt': 'wrong\n' } }, '*': {} },
    });
    const gateRuns = join(repo.tmp, 'gate-runs');
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: [
          `echo run >> '${gateRuns}'; test ! -f src/a.txt || grep -q right src/a.txt || { echo 'a is wrong'; exit 1; }`,
        ],
        fixRounds: 2,
      }),
    );
    repo.commit('config');
    const r = await run(repo, planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      '[a] round 2 stalled (no-progress): it changed nothing; another round',
    );
    expect(r.stdout).toContain('[a] failed: gates failed: ');
    expect(r.stdout).toContain('a is wrong (stalled (bot): it changed nothing) (log: ');
    expect(prompts()).toHaveLength(3);
    // The gates ran on round 1's commit only (twice: a new failure is run again to tell
    // flaky from red), and on the base once, for its baseline.
    expect(readFileSync(gateRuns, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(record(repo, 'a')).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(
        /^gates failed: .*: a is wrong \(stalled \(bot\): it changed nothing\) \(log: .*coder\.log\)$/,
      ),
    });
  });
});
