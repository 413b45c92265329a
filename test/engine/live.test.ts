import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';
import { bundledEntry } from '../support/bundled-entry.js';
import { shellWord } from '../../src/core/shell-word.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..');
// The CLI's entry bundled once (test/support/bundled-entry.ts): started with `--import tsx`
// it would transpile the sources at each start.
let main: string;
beforeAll(async () => {
  main = await bundledEntry(join(projectRoot, 'src', 'cli', 'main.ts'));
});

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** A repository whose one story's agent takes a while (a long turn). */
function slowEpic(): string {
  repo = makeRepo({ 'README.md': 'x\n' });
  const coder = scriptedCoder(repo, 'coder', {
    a: { '*': { sh: ['sleep 2.5'], write: { 'src/a.txt': 'a\n' } } },
  });
  repo.write('epicflow.yml', configYaml({ executors: [{ id: 'bot', command: coder }] }));
  repo.commit('config');
  const file = join(repo.tmp, 'epic.md');
  writeFileSync(file, planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]));
  return file;
}

const cli = (file: string): string[] => [
  process.execPath,
  main,
  'run',
  file,
  '--repo',
  repo.dir,
  '--no-agent-user',
  '--no-sandbox',
];

const LIVE = /epicflow: \d+\/1 done · (?:nothing running|running: a) · \d+s · no cost known yet/;

describe('epicflow run shows a live line on a terminal only', () => {
  const hasScript = spawnSync('script', ['--version']).status === 0;

  it('on a pseudo-terminal: the live line is drawn and redrawn in place', () => {
    // `script` (util-linux) gives the CLI a pseudo-terminal as its stdout.
    expect(hasScript).toBe(true);
    const file = slowEpic();
    const r = spawnSync('script', ['-qfec', cli(file).map(shellWord).join(' '), '/dev/null'], {
      cwd: projectRoot,
      encoding: 'utf8',
      input: '',
    });
    expect(r.status).toBe(0);
    const out = r.stdout.replace(/\r/g, '');
    expect(out).toMatch(/epicflow: 0\/1 done · running: a · \d+s · no cost known yet\n/);
    expect(out).toMatch(/epicflow: 1\/1 done · nothing running · \d+s · no cost known yet\n/);
    // Redrawn in place while the agent works, with no event: up over the board, cleared, drawn again.
    expect(out).toContain('\u001b[2A\u001b[J  active  a\nepicflow: 0/1 done · running: a · ');
    expect(epicMerges(repo)).toEqual(['Merge story a: Story a']);
  });

  it('not on a terminal: plain lines only, no live line and no cursor movement', () => {
    const file = slowEpic();
    const r = spawnSync(cli(file)[0] as string, cli(file).slice(1), {
      cwd: projectRoot,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('[a] merged into epic/epic (bot)\n');
    expect(r.stdout).not.toMatch(LIVE);
    expect(r.stdout).not.toContain('\u001b[');
  });
});
