/**
 * Transient faults of a turn, through `epicflow run`: a crash of the agent, an
 * outage of the model (a stand-in `claude` answering a recorded 529), a judge
 * that crashes. Each is retried after a backoff within the story's
 * `retries.transient`, named in the story's events and notes; only a spent
 * budget fails the story or reaches the roster. The waits are recorded, not waited.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CLEARED_VERDICT,
  configYaml,
  makeRepo,
  planMarkdown,
  record,
  reportJson,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
  loggedReason,
} from './support/repo.js';

const here = dirname(fileURLToPath(import.meta.url));
const OVERLOAD = resolve(here, '..', 'fixtures', 'streams', 'claude', 'overload.jsonl');
/** A recorded success of claude, without the BLOCKED_ON line its final message ends with. */
const OK = resolve(here, '..', 'fixtures', 'streams', 'claude', 'trap-tool-output.jsonl');

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

function lines(stdout: string, story = 's'): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith(`[${story}] `))
    .map((l) => l.slice(story.length + 3));
}

/**
 * A stand-in `claude` CLI: its first `overloads` calls answer a recorded 529 (exit 1),
 * later ones write the story's file and answer a recorded success. A counter file
 * outside the tree counts the calls.
 */
function claudeStub(overloads: number): { env: NodeJS.ProcessEnv; calls: () => number } {
  const bin = join(repo.tmp, 'bin');
  mkdirSync(bin);
  const counter = join(repo.tmp, 'claude-calls');
  writeFileSync(
    join(bin, 'claude'),
    [
      '#!/bin/sh',
      `echo call >> '${counter}'`,
      `if [ "$(wc -l < '${counter}')" -le ${overloads} ]; then cat '${OVERLOAD}'; exit 1; fi`,
      'mkdir -p src && echo s > src/s.txt',
      `cat '${OK}'`,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'claude'), 0o755);
  return {
    env: { ...process.env, PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin` },
    calls: () =>
      existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n').length : 0,
  };
}

describe('transient faults of a turn', () => {
  it('a crashed coder turn runs again after the backoff, and the story merges; the retry is in the events, the record and the report', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      s: {
        '1': { stdout: 'Segmentation fault\n', exit: 139 },
        '*': { write: { 'src/s.txt': 's\n' } },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    const retry = 'coder turn 1: crash (exit code 139), retry 1 of 3 in 2 s';
    expect(lines(r.stdout)).toEqual(
      expect.arrayContaining([retry, 'round 2: bot coding', 'merged into epic/epic (bot)']),
    );
    expect(r.waits).toEqual([2000]);
    expect(record(repo, 's')).toMatchObject({ status: 'done', notes: [retry] });
    expect(readFileSync(join(stateDir(repo), 'report.md'), 'utf8')).toContain(retry);
    const events = readFileSync(join(stateDir(repo), 'events.jsonl'), 'utf8');
    expect(events).toContain(retry);
  });

  // With retries.transient 0 a crash fails the story at once, with no word of retries:
  // test/core/story/transient.test.ts (decideAfterTurn), which the budget here reaches.
  it('the budget is per story: once spent, the crash fails the story, saying how many retries it had', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { s: { '*': { exit: 1 } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['true'],
        extra: 'retries: { transient: 2, backoff: 1s }',
      }),
    );
    repo.commit('config');
    const r = await run(repo, plan);
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual(
      expect.arrayContaining([
        'coder turn 1: crash (exit code 1), retry 1 of 2 in 1 s',
        'coder turn 2: crash (exit code 1), retry 2 of 2 in 2 s',
      ]),
    );
    expect(r.waits).toEqual([1000, 2000]);
    expect(record(repo, 's')).toMatchObject({
      status: 'failed',
      reason: loggedReason('coder turn failed (bot) after 2 retries: exit code 1'),
    });
  });

  it('an outage of the model (a 529 from claude) is retried on the same executor, which the roster never excludes', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const stub = claudeStub(2);
    const b = scriptedCoder(repo, 'b', { '*': { '*': { write: { 'src/s.txt': 'b\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'c', command: [], harness: 'claude', model: 'claude-sonnet-4-5', priority: 1 },
          { id: 'b', command: b, priority: 2 },
        ],
        gates: ['true'],
      }),
    );
    repo.commit('config');
    const r = await run(repo, plan, {}, { env: stub.env });
    expect(r.code).toBe(0);
    expect(stub.calls()).toBe(3);
    expect(lines(r.stdout)).toEqual(
      expect.arrayContaining([
        'coder turn 1: outage (HTTP 529), retry 1 of 3 in 2 s',
        'coder turn 2: outage (HTTP 529), retry 2 of 3 in 4 s',
      ]),
    );
    expect(r.waits).toEqual([2000, 4000]);
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['c'] });
    const roster = JSON.parse(readFileSync(join(stateDir(repo), 'roster.json'), 'utf8')) as {
      exclusions: Record<string, unknown>;
    };
    expect(roster.exclusions).toEqual({});
  });

  it('once the budget is spent on outages, the roster excludes the executor and the story is handed over, as before', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const stub = claudeStub(99);
    const b = scriptedCoder(repo, 'b', { '*': { '*': { write: { 'src/s.txt': 'b\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'c', command: [], harness: 'claude', model: 'claude-sonnet-4-5', priority: 1 },
          { id: 'b', command: b, priority: 2 },
        ],
        gates: ['true'],
        extra: 'retries: { transient: 1 }',
      }),
    );
    repo.commit('config');
    const r = await run(repo, plan, {}, { env: stub.env });
    expect(r.code).toBe(0);
    expect(stub.calls()).toBe(2);
    expect(lines(r.stdout)).toEqual(
      expect.arrayContaining([
        'coder turn 1: outage (HTTP 529), retry 1 of 1 in 2 s',
        'handed over from c to b',
      ]),
    );
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['c', 'b'] });
    const roster = JSON.parse(readFileSync(join(stateDir(repo), 'roster.json'), 'utf8')) as {
      exclusions: Record<string, { kind: string }>;
    };
    expect(roster.exclusions['c']?.kind).toBe('outage');
  });

  it('a judge turn that crashes is asked again, from the same budget, and its verdict counts', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      s: { '*': { write: { 'src/s.txt': 's\n' } } },
    });
    const judge = scriptedCoder(repo, 'judge', {
      s: {
        '2': { stdout: 'connect ETIMEDOUT 10.0.0.1:443\n', exit: 1 },
        '*': { stdout: CLEARED_VERDICT },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'bot', command: coder },
          { id: 'reviewer', command: judge, roles: ['judge'] },
        ],
        gates: ['true'],
        extra: 'judge: { executor: reviewer, rounds: 1 }\nretries: { backoff: 5s }',
      }),
    );
    repo.commit('config');
    const r = await run(repo, plan);
    expect(r.code).toBe(0);
    const retry = 'judge turn 2: network timeout, retry 1 of 3 in 5 s';
    expect(lines(r.stdout)).toContain(retry);
    expect(r.waits).toEqual([5000]);
    expect(reportJson(repo).stories[0]?.notes).toEqual(
      expect.arrayContaining([retry, expect.stringMatching(/^judge reviewer cleared/)]),
    );
  });
});
