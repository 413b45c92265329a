import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { statusCommand } from '../../src/cli/commands/status.js';
import { landCommand } from '../../src/cli/commands/land.js';
import { renderFailure } from '../../src/cli/context.js';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

async function status(
  opts: Parameters<typeof statusCommand>[0],
): Promise<{ code: number; out: string }> {
  let out = '';
  const io = {
    stdout: (s: string) => (out += s),
    stderr: (s: string) => (out += s),
    cwd: repo.dir,
    isTTY: false,
  };
  // What `main` does with a command's error: the one rendering, the exit code.
  const code = await statusCommand(opts, io).catch((e: unknown) => renderFailure(io, e));
  return { code, out };
}

describe('epicflow status --list', () => {
  it('lists every epic of the repository: merged of all, where it stands, its title; each epic writes board.json beside board.md, with each story wave', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      // b changes nothing: it fails.
      b: { '*': {} },
      c: { '*': { write: { 'src/c.txt': 'c\n' } } },
      d: { '*': { write: { 'src/d.txt': 'd\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    expect((await status({ list: true })).out).toBe('no epic has run in this repository yet\n');

    const shop = planMarkdown(
      [
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
      ],
      'Shop \u001b[31mcheckout\u001b[0m',
    );
    const shopRun = await run(repo, shop, { epic: 'shop' });
    expect(shopRun.code).toBe(1);
    expectBoard(shopRun.stdout, stateDir(repo, 'shop'));
    expect(
      (await run(repo, planMarkdown([{ id: 'c', owns: ['src/c.txt'] }], 'Api'), { epic: 'api' }))
        .code,
    ).toBe(0);
    expect(
      (await run(repo, planMarkdown([{ id: 'd', owns: ['src/d.txt'] }], 'Docs'), { epic: 'docs' }))
        .code,
    ).toBe(0);
    let landOut = '';
    const landed = await landCommand(
      { repo: repo.dir, epic: 'docs', agentUser: false, sandbox: false },
      { stdout: (s) => (landOut += s), stderr: (s) => (landOut += s), cwd: repo.tmp },
    );
    expect(landOut).toContain('landed epic/docs in main');
    expect(landed).toBe(0);

    const listed = await status({ list: true });
    expect(listed.code).toBe(0);
    expect(listed.out).toBe(
      [
        'epics in this repository (3):',
        '  api   1/1 merged · finished, not landed  Api',
        '  docs  1/1 merged · landed in main        Docs',
        '  shop  1/2 merged · in progress           Shop checkout',
        '',
      ].join('\n'),
    );

    const json = JSON.parse((await status({ list: true, json: true })).out) as unknown[];
    expect(json).toContainEqual({
      epic: 'shop',
      title: 'Shop checkout',
      stories: 2,
      merged: 1,
      done: 1,
      landedInto: null,
      running: false,
    });

    const both = await status({ list: true, epic: 'shop' });
    expect(both.code).toBe(2);
    expect(both.out).toBe('error: --list shows every epic: leave out --epic\n');
  });
});

/** The local board of an epic of two stories in two waves, a done and b failed. */
function expectBoard(stdout: string, dir: string): void {
  expect(stdout).toContain(`board.json:  ${join(dir, 'board.json')}\n`);
  const board = JSON.parse(readFileSync(join(dir, 'board.json'), 'utf8')) as {
    counts: Record<string, number>;
    waves: string[][];
    items: { id: string; column: string; wave: number; executors: string[] }[];
  };
  expect(board.waves).toEqual([['a'], ['b']]);
  expect(board.counts).toEqual({
    active: 0,
    planned: 0,
    waiting: 0,
    done: 1,
    failed: 1,
    skipped: 0,
    total: 2,
  });
  expect(board.items.map((i) => [i.id, i.column, i.wave, i.executors])).toEqual([
    ['a', 'done', 1, ['bot']],
    ['b', 'failed', 2, ['bot']],
  ]);
  const md = readFileSync(join(dir, 'board.md'), 'utf8');
  expect(md).toContain('## Done (1)\n\n- `a` Story a · wave 1 · bot\n');
  expect(md).toContain('## Skipped (0)\n\n_none_\n');
}
