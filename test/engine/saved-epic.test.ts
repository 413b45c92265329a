/**
 * A local epic's `epic.json` has one reader: every command that needs the plan or the
 * branch a run started with (status, land, retro, logs --follow) gets the same answer,
 * and an epic record that is not what a run writes is named with its field.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/program.js';
import { makeRepo, stateDir, type TestRepo } from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** The exit code and all the output of one `epicflow` command, run in the repository. */
async function epicflow(...argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const write = (s: string): void => {
    out += s;
  };
  const code = await main(argv, {
    stdout: write,
    stderr: write,
    readStdin: () => Promise.resolve(''),
    cwd: repo.dir,
    isTTY: false,
  });
  return { code, out };
}

function epicRecord(value: unknown): string {
  const dir = stateDir(repo, 'epic');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'epic.json');
  writeFileSync(file, `${JSON.stringify(value)}\n`);
  return file;
}

const PLAN = { stories: [{ id: 'a' }], waves: [['a']], hashes: { a: 'x' } };

describe("a local epic's epic.json", () => {
  it('one not written by a run is refused by every command, naming the file and the field', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const file = epicRecord({
      epic: 'epic',
      epicBranch: 'epic/epic',
      title: null,
      plan: { stories: 'a' },
    });
    const runs = [
      await epicflow('status', '--epic', 'epic'),
      await epicflow('status', '--list'),
      await epicflow('land', '--epic', 'epic', '--no-agent-user', '--no-sandbox'),
      await epicflow('retro', '--epic', 'epic', '--no-agent-user', '--no-sandbox'),
      await epicflow('logs', 'a', '--epic', 'epic', '--follow'),
    ];
    for (const { code } of runs) expect(code).toBe(1);
    const outputs = runs.map((r) => r.out);
    for (const out of outputs) {
      expect(out).toContain(`${file} is not an epic record epicflow wrote: plan.stories:`);
      expect(out).toContain('rerun `epicflow run` with the epic’s plan to write it again');
    }
  });

  it('a branch left out is named too, not guessed from the epic', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const file = epicRecord({ epic: 'epic', title: null, plan: PLAN });
    const status = await epicflow('status', '--epic', 'epic');
    expect(status.code).toBe(1);
    expect(status.out).toContain(`${file} is not an epic record epicflow wrote: epicBranch:`);
  });
});
