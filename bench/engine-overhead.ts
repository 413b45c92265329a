/**
 * Engine overhead benchmark: what the local engine costs per story beyond the
 * git work it cannot avoid, on a repository of 20,000 files; and the perimeter
 * at scale: a story of 50,000 changed files in a repository of 100,000.
 *
 * - engine: `epicflow run` with a no-op coder (writes one file) and `true` as
 *   the only gate, one story at a time;
 * - git floor: the same stories done directly with git, in the same run:
 *   worktree add, write the file, commit, diff against the base, merge --no-ff
 *   into an integration tree and move the branch.
 *
 * Each way runs `EPICFLOW_BENCH_ROUNDS` times (default 3), the ways in turn within a round,
 * so a swing of the machine's speed slows them alike.
 *
 * Prints the per-story medians, their ratio (goal: at most 2.0×) and the peak
 * resident memory of this process. At scale: the time and the memory of
 * `changedPaths` and `restorePaths`, whose git output is megabytes, all read.
 * Printing only: noise never fails it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLocalEpic } from '../src/jobs/local/local.js';
import { generateScaleRepo, SCALE_CHANGED, SCALE_FILES } from './perimeter-scale.js';
import { median } from './support/stats.js';

const FILES = 20_000;
const PER_DIR = 200;
const STORIES = 5;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function makeRepo(root: string): string {
  const repo = join(root, 'repo');
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, 'src', `d${Math.floor(i / PER_DIR)}`);
    if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`);
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Bench');
  git(repo, 'config', 'user.email', 'bench@example.com');
  return repo;
}

/** The same stories done directly with git: the floor no orchestration can beat. */
function gitFloor(repo: string, root: string, round: number): number[] {
  const base = git(repo, 'rev-parse', 'HEAD').trim();
  const epic = `floor${round}/epic`;
  git(repo, 'branch', epic, base);
  const integration = join(root, `floor${round}-epic`);
  git(repo, 'worktree', 'add', '-q', '--detach', integration, epic);
  const times: number[] = [];
  for (let i = 0; i < STORIES; i++) {
    const start = performance.now();
    const tree = join(root, `floor${round}-${i}`);
    const epicHead = git(repo, 'rev-parse', epic).trim();
    git(repo, 'worktree', 'add', '-q', '-b', `floor${round}/s${i}`, tree, epicHead);
    writeFileSync(join(tree, `floor-${i}.txt`), 'x\n');
    git(tree, 'add', '-A');
    git(tree, 'commit', '-q', '-m', `story ${i}`);
    git(tree, 'diff', '--raw', '-z', `${epicHead}...HEAD`);
    git(integration, 'merge', '-q', '--no-ff', '-m', `merge ${i}`, `floor${round}/s${i}`);
    const merged = git(integration, 'rev-parse', 'HEAD').trim();
    git(repo, 'update-ref', `refs/heads/${epic}`, merged, epicHead);
    times.push(performance.now() - start);
  }
  // Not timed: the trees go, as the engine's do.
  for (let i = 0; i < STORIES; i++) rmSync(join(root, `floor${round}-${i}`), { recursive: true });
  rmSync(integration, { recursive: true });
  git(repo, 'worktree', 'prune');
  return times;
}

/**
 * `epicflow run` of the stories; with `agentUser`, as `epicflow run --agent-user` (root or
 * sudo); with `sandbox`, each step inside the kernel sandbox (bubblewrap).
 */
async function engine(
  repo: string,
  root: string,
  how: { readonly agentUser?: string; readonly sandbox: boolean },
  round: number,
): Promise<number[]> {
  const { agentUser } = how;
  const stories = Array.from(
    { length: STORIES },
    (_, i) =>
      `  - id: s${i}\n    title: Story ${i}\n    description: Write one file.\n    owns: [out/s${i}.txt]${i > 0 ? `\n    dependsOn: [s${i - 1}]` : ''}`,
  );
  const plan = join(
    root,
    `bench${agentUser === undefined ? '' : '-isolated'}${how.sandbox ? '-walled' : ''}-${round}.md`,
  );
  writeFileSync(plan, `\`\`\`epicflow\nstories:\n${stories.join('\n')}\n\`\`\`\n`);
  writeFileSync(
    join(repo, 'epicflow.yml'),
    [
      'executors:',
      '  - id: noop',
      '    harness: command',
      `    command: ["sh", "-c", "mkdir -p out && echo done > out/$EPICFLOW_STORY.txt"]`,
      'gates: ["true"]',
      'concurrency: 1',
      '',
    ].join('\n'),
  );
  git(repo, 'add', '-A');
  if (git(repo, 'status', '--porcelain') !== '')
    git(repo, 'commit', '-q', '-m', 'bench repository');
  const merged: number[] = [];
  let last = performance.now();
  await runLocalEpic(
    { file: plan, repo, agentUser: agentUser ?? false, sandbox: how.sandbox },
    {
      cwd: root,
      env: process.env,
      onEvent: (e) => {
        if (e.kind === 'status' && e.data?.status === 'done') {
          const now = performance.now();
          merged.push(now - last);
          last = now;
        }
      },
    },
  );
  return merged;
}

/** The perimeter at scale: the repository is made here, measured in a fresh process. */
function scale(root: string): void {
  const repo = join(root, 'scale');
  const { base, rawBytes, lsTreeBytes } = generateScaleRepo(repo);
  console.log('');
  console.log(
    `perimeter at scale: ${SCALE_FILES.toLocaleString('en')} files, ${(SCALE_CHANGED + 1).toLocaleString('en')} changed ` +
      `(diff --raw ${(rawBytes / 1e6).toFixed(1)} MB, ls-tree ${(lsTreeBytes / 1e6).toFixed(1)} MB, all read)`,
  );
  console.log('');
  const child = join(dirname(fileURLToPath(import.meta.url)), 'perimeter-scale.ts');
  execFileSync(process.execPath, ['--import', 'tsx', child, repo, base], { stdio: 'inherit' });
}

/**
 * Rounds of every variant, one after the other in each round, so a machine whose speed
 * swings (this one's by 2× within minutes) slows all of them alike: the medians are over
 * the later stories of every round (`EPICFLOW_BENCH_ROUNDS`, default 3).
 */
const ROUNDS = Number(process.env['EPICFLOW_BENCH_ROUNDS'] ?? 3);

export async function run(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'epicflow-bench-engine-'));
  try {
    const setup = performance.now();
    const repo = makeRepo(root);
    const canIsolate = process.getuid?.() === 0;
    const agent = 'epicflow-bench-agent';
    let walls = true;
    const variants: { what: string; how: Parameters<typeof engine>[2]; later: number[] }[] = [
      { what: 'engine (--no-sandbox)', how: { sandbox: false }, later: [] },
      { what: 'engine in the kernel sandbox (the default)', how: { sandbox: true }, later: [] },
      // The agent as another user (tree and home handed over and taken back around every
      // step): where this process may become another user.
      ...(canIsolate
        ? [
            {
              what: 'engine with --agent-user --no-sandbox',
              how: { agentUser: agent, sandbox: false },
              later: [],
            },
            {
              what: 'engine with --agent-user, in the kernel sandbox (the default as root)',
              how: { agentUser: agent, sandbox: true },
              later: [],
            },
          ]
        : []),
    ];
    // The first engine story also pays the epic branch, the integration tree and the gate
    // baseline: reported apart, the steady state is the median of the later ones.
    let first = NaN;
    const floorTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of variants) {
        if (variant.how.sandbox && !walls) continue;
        const times = await engine(repo, root, variant.how, round).catch((e: unknown) => {
          if (!variant.how.sandbox) throw e;
          // Where bubblewrap cannot run here: no sandbox rows.
          console.log(`(no sandbox rows: ${e instanceof Error ? e.message : String(e)})`);
          walls = false;
          return [];
        });
        if (round === 0 && Number.isNaN(first)) first = times[0] ?? NaN;
        variant.later.push(...times.slice(1));
      }
      floorTimes.push(...gitFloor(repo, root, round));
    }
    const created = performance.now() - setup;
    const e = median(variants[0]?.later ?? []);
    const f = median(floorTimes);
    const rssMb = process.resourceUsage().maxRSS / 1024;
    console.log(
      `repository: ${FILES} files; ${STORIES} stories one at a time, each way ${ROUNDS} times in turn (${(created / 1000).toFixed(0)} s in all)`,
    );
    console.log('');
    console.log(`| measure | per story (median of ${ROUNDS * (STORIES - 1)}) |`);
    console.log('| --- | --- |');
    console.log(`| engine, first story (epic branch, trees, baseline) | ${first.toFixed(0)} ms |`);
    console.log(`| engine (--no-sandbox), later stories | ${e.toFixed(0)} ms |`);
    for (const { what, later } of variants.slice(1)) {
      if (later.length === 0) continue;
      const m = median(later);
      console.log(
        `| ${what}, later stories | ${m.toFixed(0)} ms (${(m / e).toFixed(2)}× the engine) |`,
      );
    }
    console.log(`| git floor | ${f.toFixed(0)} ms |`);
    console.log('');
    console.log(`ratio engine / git floor: ${(e / f).toFixed(2)}× (goal ≤ 2.0×)`);
    console.log(`peak RSS: ${rssMb.toFixed(0)} MB`);
    scale(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
