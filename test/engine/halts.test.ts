import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  record,
  reportJson,
  run,
  scriptedCoder,
  type TestRepo,
  loggedReason,
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

const twoStories = planMarkdown([
  { id: 'a', owns: ['src/a.txt'] },
  { id: 'b', owns: ['src/b.txt'] },
]);

describe('halts', () => {
  it('--fail-fast stops launching after the first failure', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { exit: 1 } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const r = await run(repo, twoStories, { failFast: true, concurrency: 1 });
    expect(r.code).toBe(1);
    expect(record(repo, 'a')).toMatchObject({
      status: 'failed',
      // A crash is retried (retries.transient, 3 by default) before the story fails.
      reason: loggedReason('coder turn failed (bot) after 3 retries: exit code 1'),
    });
    expect(record(repo, 'b')).toMatchObject({
      status: 'waiting',
      reason: 'not started: story a failed (fail-fast)',
    });
  });

  it('halts (without failing anything) once the token budget is spent', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const usage = 'EPICFLOW_USAGE {"input":100,"output":50,"model":"m"}\n';
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' }, stdout: usage } },
      b: { '*': { write: { 'src/b.txt': 'b\n' }, stdout: usage } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['true'],
        extra: 'budget: { tokens: 100 }',
      }),
    );
    repo.commit('config');
    const r = await run(repo, twoStories, { concurrency: 1 });
    expect(r.code).toBe(1);
    expect(record(repo, 'a')).toMatchObject({ status: 'done' });
    expect(record(repo, 'b')).toMatchObject({
      status: 'waiting',
      reason: 'not started: budget of 100 tokens spent (150)',
    });
    expect(reportJson(repo).halts).toEqual([
      { kind: 'budget', message: 'budget of 100 tokens spent (150)' },
    ]);
  });

  it('on SIGINT stops the running coder, writes the report, and a rerun continues', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const started = join(repo.tmp, 'started');
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' }, sh: [`touch '${started}'; sleep 30`] } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const file = join(repo.tmp, 'epic.md');
    writeFileSync(file, twoStories);
    const proc = spawn(process.execPath, [child, file, repo.dir], {
      cwd: projectRoot,
      env: { ...process.env, EPICFLOW_TEST_CRASH_AT: '' },
    });
    let stdout = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((done) => proc.on('exit', (code) => done(code)));
    // Wait (bounded) until the coder of story a is running, then interrupt.
    for (let i = 0; i < 600 && !existsSync(started); i++) await sleep(50);
    expect(existsSync(started)).toBe(true);
    proc.kill('SIGINT');
    expect(await exited).toBe(1);
    expect(stdout).toContain('report:');
    expect(record(repo, 'a')).toMatchObject({
      status: 'waiting',
      reason: 'interrupted; rerun to continue',
    });
    expect(reportJson(repo).halts).toEqual([{ kind: 'interrupted', message: 'interrupted' }]);

    scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    const again = await run(repo, twoStories);
    expect(again.code).toBe(0);
    expect(epicMerges(repo)).toHaveLength(2);
  });
});
