import { afterEach, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

const here = dirname(fileURLToPath(import.meta.url));
const RATE_STREAM = resolve(here, '..', 'fixtures', 'streams', 'claude', 'rate.jsonl');

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('rate limits in a run', () => {
  it('retries after a backoff, and the third rate limit excludes the executor for ten minutes', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // A stand-in `claude` CLI that answers every turn with a recorded 429.
    const bin = join(repo.tmp, 'bin');
    mkdirSync(bin);
    const calls = join(repo.tmp, 'claude-calls');
    writeFileSync(
      join(bin, 'claude'),
      ['#!/bin/sh', `echo call >> '${calls}'`, `cat '${RATE_STREAM}'`, 'exit 1', ''].join('\n'),
    );
    chmodSync(join(bin, 'claude'), 0o755);
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
    const env = { ...process.env, PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin` };
    const before = Date.now();
    const r = await run(repo, planMarkdown([{ id: 's', owns: ['src/s.txt'] }]), {}, { env });
    expect(r.code).toBe(0);
    expect(readFileSync(calls, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(
      r.stdout.split('\n').filter((l) => l === '[s] c was rate limited; trying again'),
    ).toHaveLength(2);
    expect(r.stdout).toMatch(/\[s\] c stopped: rate limited 3 times in 10 minutes/);
    // The backoff grows: 1 s, then 2 s (asked of the run's clock, not waited here).
    expect(r.waits).toEqual([1000, 2000]);
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['c', 'b'] });
    const roster = JSON.parse(readFileSync(join(stateDir(repo), 'roster.json'), 'utf8')) as {
      exclusions: Record<string, { kind: string; since: string; until: string }>;
    };
    const out = roster.exclusions.c;
    expect(out?.kind).toBe('rate-limited');
    expect(Date.parse(out?.until ?? '') - Date.parse(out?.since ?? '')).toBe(10 * 60_000);
    expect(Date.parse(out?.since ?? '')).toBeGreaterThanOrEqual(before);
  });
});
