/**
 * The Action benchmark: a 6-story epic in 3 waves delivered by story jobs,
 * each the Action's bundle run as a process against the GitHub double (REST,
 * GraphQL and git over smart HTTP), with instant coders and one quick gate.
 * Wall time is split into what the records time (coder turns, gates, git
 * merge and publish) and the rest of each job (process start, reading config,
 * plan and records from GitHub, fetching, reconciling); the checkout the
 * runner does before the job is timed apart. Each job gets the dispatch
 * payload a runner writes (`GITHUB_EVENT_PATH`). Requests per story come from
 * the double's own counters, around the jobs only, in total and by operation.
 * Printing only.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStateStore } from '../src/adapters/github/state-store.js';
import {
  OWNER,
  REPO,
  buildBundle,
  checkout,
  planBody,
  runJob,
  startEpic,
  startWorld,
  storyInputs,
} from '../test/action/support/world.js';
import { dispatchEvent } from '../test/action/support/dispatch-event.js';

/** Six stories in three waves (two each). */
const SIX = [
  { id: 'api' },
  { id: 'db' },
  { id: 'ui', dependsOn: ['api'] },
  { id: 'sync', dependsOn: ['db'] },
  { id: 'docs', dependsOn: ['ui', 'sync'] },
  { id: 'ops', dependsOn: ['ui'] },
];

const ms = (n: number): string => `${Math.round(n)} ms`;

/**
 * Log lines that end a phase of a story job: the first line (the process is
 * up), `started with` (config, plan and record read, checkout scrubbed and
 * fetched), `merged into` (the lifecycle: branch, coder, gates, merge) and
 * `::endgroup::` (branches pushed, record and roster saved); the exit ends reconciling.
 */
const PHASES: readonly [string, RegExp][] = [
  ['process start', /^::add-mask::/],
  ['prepare: read config, plan, record; scrub; fetch', /: started with /],
  ['story lifecycle (branch, coder, gates, merge)', /: merged into /],
  ['publish: push story branch and epic head, save record and roster', /^::endgroup::/],
];

function markPhases(child: ChildProcess, t0: number, marks: Map<string, number>): void {
  child.stdout?.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) {
      for (const [name, re] of PHASES) {
        if (!marks.has(name) && re.test(line)) marks.set(name, performance.now() - t0);
      }
    }
  });
}

/** Adds each phase's length (from the previous mark) to the totals; the rest is reconciling. */
function addPhases(totals: Map<string, number>, marks: Map<string, number>, end: number): void {
  let last = 0;
  for (const [name] of PHASES) {
    const at = marks.get(name) ?? last;
    totals.set(name, (totals.get(name) ?? 0) + at - last);
    last = at;
  }
  const reconcile = 'reconcile: decide and dispatch what is next';
  totals.set(reconcile, (totals.get(reconcile) ?? 0) + end - last);
}

export async function run(): Promise<void> {
  const bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bench-bundle-'));
  const w = await startWorld();
  try {
    const bundle = await buildBundle(bundleDir);
    const t0 = performance.now();
    const epic = await startEpic(w, planBody(SIX));
    const start = performance.now() - t0;
    let checkoutMs = 0;
    let jobsMs = 0;
    const api = { before: 0, during: 0 };
    // Requests of the story jobs by operation (REST operationId, GraphQL operation name).
    const byOperation = new Map<string, number>();
    const operations = (): Map<string, number> =>
      new Map([
        ...Object.entries(w.gh.stats.rest),
        ...Object.entries(w.gh.stats.graphql).map(([op, n]): [string, number] => [
          `graphql ${op}`,
          n,
        ]),
      ]);
    const gitReq = { during: 0 };
    const done = new Set<number>();
    const phases = new Map<string, number>();
    for (;;) {
      const next = w.gh.state
        .dispatches(OWNER, REPO)
        .find((d) => d.inputs['epic'] === String(epic) && !done.has(d.runId));
      if (next === undefined) break;
      done.add(next.runId);
      const story = String(next.inputs['story']);
      const c0 = performance.now();
      const workspace = await checkout(w, story);
      checkoutMs += performance.now() - c0;
      api.before = w.gh.stats.requests - w.gh.stats.gitRequests;
      const g0 = w.gh.stats.gitRequests;
      const ops0 = operations();
      const j0 = performance.now();
      const marks = new Map<string, number>();
      const job = await runJob(w, bundle, {
        name: story,
        workspace,
        inputs: storyInputs(w, epic, story),
        runId: next.runId,
        env: { GITHUB_EVENT_PATH: await dispatchEvent(w, story, next.inputs) },
        onSpawn: (child) => markPhases(child, j0, marks),
      });
      const jobMs = performance.now() - j0;
      jobsMs += jobMs;
      addPhases(phases, marks, jobMs);
      api.during += w.gh.stats.requests - w.gh.stats.gitRequests - api.before;
      gitReq.during += w.gh.stats.gitRequests - g0;
      for (const [op, count] of operations()) {
        const d = count - (ops0.get(op) ?? 0);
        if (d > 0) byOperation.set(op, (byOperation.get(op) ?? 0) + d);
      }
      if (job.code !== 0) throw new Error(`story ${story} failed:\n${job.stdout}`);
    }
    const wall = performance.now() - t0;
    const records = await new GitHubStateStore({ repo: w.repo, epic: String(epic) }).listStories();
    if (records.length !== SIX.length || records.some((r) => r.status !== 'done')) {
      throw new Error('the epic did not finish');
    }
    const sum = (key: string): number => records.reduce((n, r) => n + (r.timings[key] ?? 0), 0);
    const coder = sum('code');
    const gates = sum('gates');
    const merge = sum('integrate');
    const setup = sum('setup') + sum('perimeter');
    const rest = jobsMs - coder - gates - merge - setup;
    const n = SIX.length;
    console.log(`A ${n}-story epic in 3 waves, jobs one after another, instant coders.\n`);
    console.log('| part | total | per story |');
    console.log('| --- | --- | --- |');
    console.log(`| whole epic, label to last merge | ${ms(wall)} | ${ms(wall / n)} |`);
    console.log(`| epic start (orchestrator on the label) | ${ms(start)} | — |`);
    console.log(
      `| runner checkout (clone over HTTP) | ${ms(checkoutMs)} | ${ms(checkoutMs / n)} |`,
    );
    console.log(`| story jobs (bundle processes) | ${ms(jobsMs)} | ${ms(jobsMs / n)} |`);
    console.log(`| · coder turns | ${ms(coder)} | ${ms(coder / n)} |`);
    console.log(`| · gates | ${ms(gates)} | ${ms(gates / n)} |`);
    console.log(`| · git: merge into the epic branch and push | ${ms(merge)} | ${ms(merge / n)} |`);
    console.log(`| · setup and perimeter | ${ms(setup)} | ${ms(setup / n)} |`);
    console.log(
      `| · orchestration: start, GitHub reads/writes, fetch, reconcile | ${ms(rest)} | ${ms(rest / n)} |`,
    );
    console.log('\nThe same story jobs by phase, from the times their log lines appeared:\n');
    console.log('| job phase | total | per story |');
    console.log('| --- | --- | --- |');
    for (const [name, total] of phases)
      console.log(`| ${name} | ${ms(total)} | ${ms(total / n)} |`);
    console.log('\n| GitHub requests during story jobs | total | per story |');
    console.log('| --- | --- | --- |');
    console.log(`| REST + GraphQL | ${api.during} | ${(api.during / n).toFixed(1)} |`);
    console.log(`| git over HTTP | ${gitReq.during} | ${(gitReq.during / n).toFixed(1)} |`);
    console.log('\n| requests of story jobs, by operation | per story |');
    console.log('| --- | --- |');
    for (const [op, count] of [...byOperation].sort((a, b) => b[1] - a[1]))
      console.log(`| \`${op}\` | ${(count / n).toFixed(1)} |`);
    const top = Object.entries(w.gh.stats.rest)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([op, count]) => `${op} ${count}`)
      .join(', ');
    console.log(`\nBusiest REST operations over the whole epic: ${top}.`);
  } finally {
    await w.close();
    await rm(bundleDir, { recursive: true, force: true });
  }
}
