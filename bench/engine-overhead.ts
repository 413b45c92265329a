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
function gitFloor(repo: string, root: string): number[] {
  const base = git(repo, 'rev-parse', 'HEAD').trim();
  git(repo, 'branch', 'floor/epic', base);
  const integration = join(root, 'floor-epic');
  git(repo, 'worktree', 'add', '-q', '--detach', integration, 'floor/epic');
  const times: number[] = [];
  for (let i = 0; i < STORIES; i++) {
    const start = performance.now();
    const tree = join(root, `floor-${i}`);
    const epicHead = git(repo, 'rev-parse', 'floor/epic').trim();
    git(repo, 'worktree', 'add', '-q', '-b', `floor/s${i}`, tree, epicHead);
    writeFileSync(join(tree, `floor-${i}.txt`), 'x\n');
    git(tree, 'add', '-A');
    git(tree, 'commit', '-q', '-m', `story ${i}`);
    git(tree, 'diff', '--raw', '-z', `${epicHead}...HEAD`);
    git(integration, 'merge', '-q', '--no-ff', '-m', `merge ${i}`, `floor/s${i}`);
    const merged = git(integration, 'rev-parse', 'HEAD').trim();
    git(repo, 'update-ref', 'refs/heads/floor/epic', merged, epicHead);
    times.push(performance.now() - start);
  }
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
): Promise<number[]> {
  const { agentUser } = how;
  const stories = Array.from(
    { length: STORIES },
    (_, i) =>
      `  - id: s${i}\n    title: Story ${i}\n    description: Write one file.\n    owns: [out/s${i}.txt]${i > 0 ? `\n    dependsOn: [s${i - 1}]` : ''}`,
  );
  const plan = join(
    root,
    `bench${agentUser === undefined ? '' : '-isolated'}${how.sandbox ? '-walled' : ''}.md`,
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

export async function run(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'epicflow-bench-engine-'));
  try {
    const setup = performance.now();
    const repo = makeRepo(root);
    const engineTimes = await engine(repo, root, { sandbox: false });
    const created = performance.now() - setup;
    const floorTimes = gitFloor(repo, root);
    // The same stories with every step in the kernel sandbox, where bubblewrap runs here.
    const walledTimes = await engine(repo, root, { sandbox: true }).catch((e: unknown) => {
      console.log(`(no sandbox row: ${e instanceof Error ? e.message : String(e)})`);
      return [];
    });
    // The same stories with the agent as another user (tree and home handed over and
    // taken back around every step): where this process may become another user.
    const canIsolate = process.getuid?.() === 0;
    const agent = 'epicflow-bench-agent';
    const isolatedTimes = canIsolate
      ? await engine(repo, root, { agentUser: agent, sandbox: false })
      : [];
    const isolatedWalledTimes =
      canIsolate && walledTimes.length > 0
        ? await engine(repo, root, { agentUser: agent, sandbox: true })
        : [];
    // The first engine story also pays the epic branch, the integration tree
    // and the gate baseline: reported apart, the steady state is the median.
    const steady = engineTimes.slice(1);
    const e = median(steady);
    const f = median(floorTimes);
    const rssMb = process.resourceUsage().maxRSS / 1024;
    console.log(
      `repository: ${FILES} files; ${STORIES} stories one at a time (setup and first run ${(created / 1000).toFixed(1)} s)`,
    );
    console.log('');
    console.log('| measure | per story (median) |');
    console.log('| --- | --- |');
    console.log(
      `| engine, first story (epic branch, trees, baseline) | ${(engineTimes[0] ?? NaN).toFixed(0)} ms |`,
    );
    console.log(`| engine (--no-sandbox), later stories | ${e.toFixed(0)} ms |`);
    const row = (what: string, times: number[]): void => {
      if (times.length === 0) return;
      const m = median(times.slice(1));
      console.log(
        `| ${what}, later stories | ${m.toFixed(0)} ms (${(m / e).toFixed(2)}× the engine) |`,
      );
    };
    row('engine in the kernel sandbox (the default)', walledTimes);
    row('engine with --agent-user --no-sandbox', isolatedTimes);
    row('engine with --agent-user, in the kernel sandbox', isolatedWalledTimes);
    console.log(`| git floor | ${f.toFixed(0)} ms |`);
    console.log('');
    console.log(`ratio engine / git floor: ${(e / f).toFixed(2)}× (goal ≤ 2.0×)`);
    console.log(`peak RSS: ${rssMb.toFixed(0)} MB`);
    scale(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
