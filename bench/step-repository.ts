/**
 * What a repository of the step's own costs (docs/adr/0025): for repositories of 1,000,
 * 10,000 and 50,000 files with a story's tree checked out, the median time to make one
 * (`makeStepRepository`: three git reads, a few files, `read-tree`), an empty step in the
 * kernel sandbox with and without it, and the step's first and second `git status` against
 * the same command outside the sandbox in the tree itself. Its index is written from the
 * commit, without the files' stat data, so the first status reads every file.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeStepRepository } from '../src/adapters/git/step-repository.js';
import { sandbox } from '../src/adapters/process/sandbox.js';
import { sameUser } from '../src/adapters/process/untrusted.js';
import { median } from './support/stats.js';

const SIZES = [1_000, 10_000, 50_000] as const;
const RUNS = 5;
const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** A repository of `files` files in folders of 100, and a story's tree checked out. */
function makeRepo(root: string, files: number): { gitDir: string; tree: string } {
  const repo = join(root, 'repo');
  for (let i = 0; i < files; i++) {
    const dir = join(repo, `d${String(Math.floor(i / 100))}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${String(i)}.txt`), `${String(i)}\n`);
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=b', '-c', 'user.email=b@x', 'commit', '-q', '-m', 'files');
  const tree = join(root, 'trees', 'story');
  git(repo, 'worktree', 'add', '-q', '-b', 'story', tree);
  return { gitDir: join(repo, '.git'), tree };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function medianOf(work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await timed(work));
  return median(times);
}

export async function run(): Promise<void> {
  const rows: string[] = [
    '| files | make one | empty step without | with | ratio | first status in it | second | in the tree itself |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const files of SIZES) {
    const root = mkdtempSync(join(tmpdir(), 'epicflow-bench-step-repo-'));
    try {
      const { gitDir, tree } = makeRepo(root, files);
      let n = 0;
      const make = await medianOf(() =>
        makeStepRepository(gitDir, [tree], join(root, 'made', String(n++))),
      );
      const plain = sameUser(await sandbox(env, join(root, 'scratch-a')));
      const withRepo = sameUser(await sandbox(env, join(root, 'scratch-b'), [], gitDir));
      const step = (u: typeof plain, command: string) =>
        u.runShell(command, { cwd: tree, env, ownHome: true, timeoutMs: 600_000 });
      const without = await medianOf(() => step(plain, 'true'));
      const withIt = await medianOf(() => step(withRepo, 'true'));
      // One step, two statuses: the first reads every file, the second what the first left.
      const statuses: { first: number; second: number }[] = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await step(
          withRepo,
          'a=$(date +%s%N); git status --porcelain >/dev/null; b=$(date +%s%N); git status --porcelain >/dev/null; c=$(date +%s%N); echo $(( (b-a)/1000000 )) $(( (c-b)/1000000 ))',
        );
        const [first, second] = r.stdout.trim().split(' ').map(Number);
        statuses.push({ first: first ?? NaN, second: second ?? NaN });
      }
      const outside = await medianOf(async () => {
        git(tree, 'status', '--porcelain');
      });
      const ms = (x: number): string => `${x.toFixed(0)} ms`;
      rows.push(
        `| ${files.toLocaleString('en-US')} | ${ms(make)} | ${ms(without)} | ${ms(withIt)} | ${(withIt / without).toFixed(2)}× | ${ms(median(statuses.map((s) => s.first)))} | ${ms(median(statuses.map((s) => s.second)))} | ${ms(outside)} |`,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  console.log(rows.join('\n'));
}
