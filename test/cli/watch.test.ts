/**
 * `epicflow watch`: a second terminal follows a run until it ends, seeing the lines the
 * run prints; on an epic nobody runs, it shows what the last run said and ends.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { watchCommand } from '../../src/cli/commands/watch.js';
import { renderFailure } from '../../src/cli/context.js';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);

async function watch(pause?: () => Promise<void>): Promise<{ code: number; out: string }> {
  let out = '';
  const io = {
    stdout: (s: string) => (out += s),
    stderr: (s: string) => (out += s),
    cwd: repo.dir,
  };
  const code = await watchCommand({}, io, pause === undefined ? {} : { pause }).catch(
    (e: unknown) => renderFailure(io, e),
  );
  return { code, out };
}

describe('epicflow watch', () => {
  it('follows a running epic to its end, line by line as the run prints them', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const go = join(repo.tmp, 'go');
    const coder = scriptedCoder(repo, 'coder', {
      // The coder waits for the watcher to have looked once while the run is active.
      a: {
        '*': { sh: [`while [ ! -f '${go}' ]; do sleep 0.05; done`], write: { 'src/a.txt': 'a\n' } },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const running = run(repo, plan);
    // Watched once the story started (its coder then waits for the watcher).
    const events = join(stateDir(repo), 'events.jsonl');
    const started = (): boolean =>
      existsSync(events) && readFileSync(events, 'utf8').includes('started with bot');
    for (let i = 0; i < 800 && !started(); i++) await sleep(25);
    let looks = 0;
    const watched = await watch(async () => {
      looks += 1;
      if (looks === 1) writeFileSync(go, '');
      await sleep(50);
    });
    const ran = await running;
    expect(ran.code).toBe(0);
    expect(looks).toBeGreaterThan(0);
    expect(watched.code).toBe(0);
    const lines = watched.out.trim().split('\n');
    expect(lines[0]).toBe(
      'epicflow: following the run of epic epic (Ctrl-C stops watching, not the run)',
    );
    expect(lines).toContain('[a] started with bot');
    expect(lines).toContain('[a] merged into epic/epic (bot)');
    expect(lines[lines.length - 1]).toBe(
      'epicflow: the run of epic epic is not active; see epicflow status',
    );
    // The run's own lines, in its order.
    const printed = ran.stdout.split('\n').filter((l) => l.startsWith('[a] '));
    expect(lines.filter((l) => l.startsWith('[a] '))).toEqual(printed);
  });

  it('an epic nobody runs: what its last run said, then it ends', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    expect((await run(repo, plan)).code).toBe(0);
    const watched = await watch(async () => {
      throw new Error('no run is active: nothing to wait for');
    });
    expect(watched.code).toBe(0);
    expect(watched.out).toMatch(
      /^epicflow: no run of epic epic is active; what its last run said:\n[\s\S]*\[a\] merged into epic\/epic \(bot\)\n[\s\S]*epicflow: the run of epic epic is not active; see epicflow status\n$/,
    );
  });
});
