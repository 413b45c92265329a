/**
 * The time budget of a test file (test/support/budgets.js), through jest run in a child
 * process on fixture files: a file over its project's budget fails the run, named with its
 * time and its budget; a file within it passes; a host measured slower than the reference
 * has every budget scaled by as much.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureConfig, runJest } from './jest-child.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-budgets-'));
  await writeFile(
    join(dir, 'slow.test.cjs'),
    "test('waits three seconds', () => new Promise((r) => setTimeout(r, 3000)));\n",
  );
  await writeFile(join(dir, 'fast.test.cjs'), "test('adds', () => expect(1 + 1).toBe(2));\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The environment of the child: no fixed host factor, whatever the parent's. */
function env(): NodeJS.ProcessEnv {
  const { EPICFLOW_TEST_BUDGET_FACTOR: _factor, CI: _ci, ...rest } = process.env;
  return rest;
}

describe('a test file’s time budget', () => {
  it('fails a file over its project’s budget, naming the file, its time and the budget', async () => {
    // A reference far above any host's time: the host counts as no slower than it.
    const config = fixtureConfig(
      dir,
      { tight: ['slow.test.cjs'], roomy: ['fast.test.cjs'] },
      { projects: { tight: 1, roomy: 60 }, referenceMs: 1e9 },
    );
    const run = await runJest(dir, config, env());
    expect(run.output).toContain('Tests:       2 passed, 2 total');
    expect(run.output).toMatch(
      /^ {2}slow\.test\.cjs took (\d+\.\d) s, over its budget of 1 s \(project tight\) × 1\.00 for this host's speed \(measured: \d+ ms, reference 1000000000 ms\) = 1\.0 s$/m,
    );
    const took = Number(/slow\.test\.cjs took (\d+\.\d) s/.exec(run.output)?.[1]);
    expect(took).toBeGreaterThanOrEqual(3);
    expect(run.output).not.toMatch(/fast\.test\.cjs took/);
    expect(run.code).toBe(1);
  });

  it('passes a file within its budget', async () => {
    const config = fixtureConfig(
      dir,
      { roomy: ['fast.test.cjs'] },
      { projects: { roomy: 60 }, referenceMs: 1e9 },
    );
    const run = await runJest(dir, config, env());
    expect(run.output).not.toContain('Test file budgets');
    expect(run.code).toBe(0);
  });

  it('scales the budget by how much slower than the reference the host measured', async () => {
    // A reference of 1 ms: any host is hundreds of times slower, and 1 s becomes minutes.
    const config = fixtureConfig(
      dir,
      { tight: ['slow.test.cjs'] },
      { projects: { tight: 1 }, referenceMs: 1 },
    );
    const run = await runJest(dir, config, env());
    expect(run.output).not.toContain('Test file budgets');
    expect(run.code).toBe(0);
  });

  it('fails a file whose project has no budget', async () => {
    const config = fixtureConfig(
      dir,
      { forgotten: ['fast.test.cjs'] },
      { projects: {}, referenceMs: 1e9 },
    );
    const run = await runJest(dir, config, env());
    expect(run.output).toContain(
      '  fast.test.cjs has no budget: its project "forgotten" needs one in jest.config.js',
    );
    expect(run.code).toBe(1);
  });
});
