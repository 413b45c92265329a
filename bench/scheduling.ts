/**
 * Scheduling benchmark: a discrete-event simulation of whole epics under four
 * launch policies, run side by side on the same random epics.
 *
 * - epicflow: the real `schedule` (longest remaining chain first, no barriers);
 * - plan order: ready stories in plan order (the original system's policy);
 * - wave barrier: a wave starts only when the previous one is fully merged;
 * - serial: one story at a time, in plan order.
 *
 * Each makespan is divided by a lower bound no schedule can beat:
 * max(critical path duration, total work ÷ slots). Printing only: nothing here
 * fails the process on noise.
 */
import type { Story, StoryStatus } from '../src/core/model.js';
import { schedule } from '../src/core/scheduler/index.js';
import type { SchedulerInput } from '../src/core/scheduler/index.js';
import { seededRng } from './support/random.js';
import type { Rng } from './support/random.js';
import { median, quantile } from './support/stats.js';

const STORIES = 100;
const SLOTS = 8;
const SEEDS = 200;
const SWEEP_SEEDS = 100;
/** Spread of story durations: log-normal with median 1 and this σ. */
const SIGMA = 0.8;

/** Knobs of the random epics; see `randomEpic`. */
interface Shape {
  /** Chance that a feature builds on an earlier feature (a ¼ of it per later story). */
  readonly crossLinks: number;
  /** Layers in a feature, at most. */
  readonly maxFeatureDepth: number;
}

const DEFAULT_SHAPE: Shape = { crossLinks: 0.4, maxFeatureDepth: 5 };

interface Epic {
  /** Stories in plan order. */
  readonly stories: readonly Story[];
  /** Duration of each story (plan index), in units of a median story. */
  readonly durations: readonly number[];
  /** Dependencies by plan index. */
  readonly deps: readonly (readonly number[])[];
}

function storyOf(id: string, dependsOn: readonly string[]): Story {
  return {
    id,
    title: id,
    description: id,
    owns: [id],
    reads: [],
    dependsOn,
    provides: [],
    acceptance: [],
    testsChange: false,
  };
}

/**
 * A plausible epic's dependency graph, nodes numbered in the order people write
 * plans: a few foundation stories (schema, config, shared types) that much
 * depends on; then features one after another, each a few layers deep (a base
 * story, stories built on it, stories joining those), some building on an
 * earlier feature; then integration stories (end-to-end tests, docs) that join
 * the ends of several features. Fan-out comes from foundations and feature
 * bases, fan-in from joins and integration. Feature sizes and depths vary, so
 * the longest chains land anywhere in the plan, not first.
 */
function randomEpic(rng: Rng, shape: Shape): number[][] {
  const deps: number[][] = [];
  const add = (d: readonly number[]): number =>
    deps.push([...new Set(d)].sort((a, b) => a - b)) - 1;

  const foundation: number[] = [];
  const foundationCount = rng.int(3, 6);
  for (let i = 0; i < foundationCount; i++) {
    foundation.push(add(foundation.length > 0 && rng.next() < 0.5 ? [rng.pick(foundation)] : []));
  }

  const integrationCount = rng.int(3, 6);
  const sizes = splitInto(rng, STORIES - foundationCount - integrationCount, rng.int(8, 14), 2);
  const features: number[][] = [];
  for (const size of sizes) {
    const depth = rng.int(2, Math.min(shape.maxFeatureDepth, size));
    // One story per layer, the rest spread over the layers above the base.
    const layerOf = Array.from({ length: size }, (_, k) =>
      k < depth ? k : rng.int(1, depth - 1),
    ).sort((a, b) => a - b);
    const layers: number[][] = Array.from({ length: depth }, () => []);
    const earlier = features.flat();
    for (const layer of layerOf) {
      const d: number[] = [];
      const below = layers[layer - 1];
      if (below === undefined) {
        d.push(rng.pick(foundation));
        if (rng.next() < 0.4) d.push(rng.pick(foundation));
        if (earlier.length > 0 && rng.next() < shape.crossLinks) d.push(rng.pick(earlier));
      } else {
        d.push(rng.pick(below));
        if (rng.next() < 0.3) d.push(rng.pick(below));
        if (earlier.length > 0 && rng.next() < shape.crossLinks / 4) d.push(rng.pick(earlier));
      }
      layers[layer]?.push(add(d));
    }
    features.push(layers.flat());
  }

  const integration: number[] = [];
  for (let i = 0; i < integrationCount; i++) {
    const d: number[] = [];
    for (let j = rng.int(3, 6); j > 0; j--) {
      const feature = rng.pick(features);
      d.push(feature[feature.length - 1] ?? 0);
    }
    if (integration.length > 0 && rng.next() < 0.5) d.push(rng.pick(integration));
    integration.push(add(d));
  }
  return deps;
}

/** Splits `total` into `parts` random sizes of at least `min` each. */
function splitInto(rng: Rng, total: number, parts: number, min: number): number[] {
  const weights = Array.from({ length: parts }, () => rng.logNormal(0, 0.6));
  const sum = weights.reduce((a, b) => a + b, 0);
  const spare = total - parts * min;
  const sizes = weights.map((w) => min + Math.floor((spare * w) / sum));
  let left = total - sizes.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % parts, left--) sizes[i] = (sizes[i] ?? 0) + 1;
  return sizes;
}

/** A random topological order (Kahn's algorithm picking among the available at random). */
function randomTopologicalOrder(rng: Rng, deps: readonly (readonly number[])[]): number[] {
  const missing = deps.map((d) => d.length);
  const dependents: number[][] = deps.map(() => []);
  deps.forEach((ds, i) => ds.forEach((d) => dependents[d]?.push(i)));
  const available = missing.flatMap((m, i) => (m === 0 ? [i] : []));
  const order: number[] = [];
  while (available.length > 0) {
    const i = available.splice(rng.int(0, available.length - 1), 1)[0] ?? 0;
    order.push(i);
    for (const t of dependents[i] ?? []) {
      missing[t] = (missing[t] ?? 0) - 1;
      if (missing[t] === 0) available.push(t);
    }
  }
  return order;
}

/** Lists the nodes of a generated graph as stories in `order`. */
function toEpic(
  deps: readonly (readonly number[])[],
  durations: readonly number[],
  order: readonly number[],
): Epic {
  const position = new Map(order.map((node, pos) => [node, pos]));
  return {
    stories: order.map((node) =>
      storyOf(
        `s${node}`,
        (deps[node] ?? []).map((d) => `s${d}`),
      ),
    ),
    durations: order.map((node) => durations[node] ?? 0),
    deps: order.map((node) => (deps[node] ?? []).map((d) => position.get(d) ?? 0)),
  };
}

/** What a policy sees at a decision point. */
interface SimState {
  readonly epic: Epic;
  /** Status by plan index. */
  readonly status: readonly StoryStatus[];
  readonly running: number;
}
/** Returns plan indexes to start now. */
type Policy = (s: SimState) => number[];

const readyInPlanOrder = (s: SimState): number[] =>
  s.status.flatMap((st, i) =>
    st === 'planned' && (s.epic.deps[i] ?? []).every((d) => s.status[d] === 'done') ? [i] : [],
  );

/** The input the engine would hand the scheduler; the roster has SLOTS coder slots. */
function schedulerInput(s: SimState): SchedulerInput {
  const status: Record<string, StoryStatus> = {};
  s.epic.stories.forEach((story, i) => (status[story.id] = s.status[i] ?? 'planned'));
  return {
    stories: s.epic.stories,
    status,
    concurrency: SLOTS,
    freeCoderSlots: SLOTS - s.running,
  };
}

const epicflowPolicy: Policy = (s) => {
  const index = new Map(s.epic.stories.map((story, i) => [story.id, i]));
  return schedule(schedulerInput(s)).start.map((id) => index.get(id) ?? -1);
};

const planOrderPolicy: Policy = (s) => readyInPlanOrder(s).slice(0, SLOTS - s.running);

const serialPolicy: Policy = (s) => (s.running > 0 ? [] : readyInPlanOrder(s).slice(0, 1));

const waveBarrierPolicy: Policy = (s) => {
  const wave = wavesOf(s.epic.deps);
  let current = Infinity;
  s.status.forEach((st, i) => {
    if (st !== 'done') current = Math.min(current, wave[i] ?? 0);
  });
  return readyInPlanOrder(s)
    .filter((i) => wave[i] === current)
    .slice(0, SLOTS - s.running);
};

const POLICIES: readonly (readonly [string, Policy])[] = [
  ['epicflow', epicflowPolicy],
  ['plan order', planOrderPolicy],
  ['wave barrier', waveBarrierPolicy],
  ['serial', serialPolicy],
];

/** Folds `step(i, valuesOfDeps)` over a DAG given by dependency lists, memoised. */
function overDag(
  deps: readonly (readonly number[])[],
  step: (i: number, below: number[]) => number,
): number[] {
  const memo: number[] = [];
  const of = (i: number): number => {
    const known = memo[i];
    if (known !== undefined) return known;
    const v = step(i, (deps[i] ?? []).map(of));
    memo[i] = v;
    return v;
  };
  deps.forEach((_, i) => of(i));
  return memo;
}

const waveCache = new WeakMap<object, number[]>();
/** Wave of each story: 1 + the largest wave among its dependencies. */
function wavesOf(deps: readonly (readonly number[])[]): number[] {
  const cached = waveCache.get(deps);
  if (cached !== undefined) return cached;
  const waves = overDag(deps, (_, below) => 1 + Math.max(0, ...below));
  waveCache.set(deps, waves);
  return waves;
}

function criticalPath(epic: Epic): number {
  const finish = overDag(epic.deps, (i, below) => (epic.durations[i] ?? 0) + Math.max(0, ...below));
  return Math.max(...finish);
}

const totalWork = (epic: Epic): number => epic.durations.reduce((a, b) => a + b, 0);

/** Runs the epic to the end under a policy; returns the makespan. */
function simulate(epic: Epic, policy: Policy, onDecision?: (s: SimState) => void): number {
  const status: StoryStatus[] = epic.stories.map(() => 'planned');
  const running = new Map<number, number>(); // plan index → finish time
  let now = 0;
  let done = 0;
  while (done < status.length) {
    const state = { epic, status, running: running.size };
    onDecision?.(state);
    for (const i of policy(state)) {
      if (status[i] !== 'planned') throw new Error(`policy started story ${i} twice`);
      status[i] = 'active';
      running.set(i, now + (epic.durations[i] ?? 0));
    }
    if (running.size === 0) throw new Error('policy stalled with nothing running');
    now = Math.min(...running.values());
    for (const [i, end] of running) {
      if (end <= now) {
        running.delete(i);
        status[i] = 'done';
        done++;
      }
    }
  }
  return now;
}

interface Results {
  /** Makespan ÷ lower bound per policy, one entry per seed. */
  readonly ratio: Record<string, number[]>;
  /** Per seed: epicflow's makespan ÷ this policy's makespan. */
  readonly vsEpicflow: Record<string, number[]>;
  /** Per seed: waves, and critical path ÷ (work ÷ slots): above 1 the chain binds. */
  readonly waves: number[];
  readonly chainShare: number[];
}

function measure(shape: Shape, seeds: number, order: 'feature' | 'random'): Results {
  const r: Results = { ratio: {}, vsEpicflow: {}, waves: [], chainShare: [] };
  for (let seed = 1; seed <= seeds; seed++) {
    const rng = seededRng(seed);
    const deps = randomEpic(rng, shape);
    const durations = deps.map(() => rng.logNormal(0, SIGMA));
    const plan = order === 'feature' ? deps.map((_, i) => i) : randomTopologicalOrder(rng, deps);
    const epic = toEpic(deps, durations, plan);
    const cp = criticalPath(epic);
    const bound = Math.max(cp, totalWork(epic) / SLOTS);
    r.waves.push(Math.max(...wavesOf(epic.deps)));
    r.chainShare.push(cp / (totalWork(epic) / SLOTS));
    const makespans = POLICIES.map(([name, policy]) => [name, simulate(epic, policy)] as const);
    const ours = makespans[0]?.[1] ?? Number.NaN;
    for (const [name, makespan] of makespans) {
      (r.ratio[name] ??= []).push(makespan / bound);
      (r.vsEpicflow[name] ??= []).push(ours / makespan);
    }
  }
  return r;
}

const f2 = (x: number): string => x.toFixed(2);
const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
const med = (r: Record<string, number[]>, name: string): number => median(r[name] ?? []);

function printResults(title: string, r: Results): void {
  console.log(
    `${title} (median ${median(r.waves)} waves, critical path ÷ (work ÷ slots) ` +
      `median ${f2(median(r.chainShare))})\n`,
  );
  console.log('| policy | makespan ÷ lower bound, median | p90 | epicflow ÷ policy, median |');
  console.log('|---|---:|---:|---:|');
  for (const [name] of POLICIES) {
    const paired = name === 'epicflow' ? '—' : f2(med(r.vsEpicflow, name));
    console.log(
      `| ${name} | ${f2(med(r.ratio, name))} | ${f2(quantile(r.ratio[name] ?? [], 0.9))} | ${paired} |`,
    );
  }
  const ours = med(r.ratio, 'epicflow');
  const vsPlan = med(r.vsEpicflow, 'plan order');
  const vsWave = med(r.vsEpicflow, 'wave barrier');
  console.log('');
  console.log(`- epicflow median ${f2(ours)} × lower bound (goal ≤ 1.10): ${verdict(ours <= 1.1)}`);
  console.log(`- epicflow ÷ plan order ${f2(vsPlan)} (goal ≤ 0.95): ${verdict(vsPlan <= 0.95)}`);
  console.log(`- epicflow ÷ wave barrier ${f2(vsWave)} (goal ≤ 0.85): ${verdict(vsWave <= 0.85)}`);
  console.log('');
}

/** How the comparison moves from work-bound epics to chain-bound ones. */
function printSweep(): void {
  console.log(
    `Sensitivity (${SWEEP_SEEDS} seeds each, feature-ordered plans): the chance that a ` +
      'feature builds on an earlier one\n',
  );
  console.log(
    '| cross links | waves | chain ÷ (work ÷ slots) | epicflow | plan order | wave barrier | epicflow ÷ plan order | epicflow ÷ wave barrier |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const crossLinks of [0.1, 0.25, 0.4, 0.6, 0.8]) {
    const r = measure({ ...DEFAULT_SHAPE, crossLinks }, SWEEP_SEEDS, 'feature');
    const cells = [
      String(crossLinks),
      String(median(r.waves)),
      f2(median(r.chainShare)),
      f2(med(r.ratio, 'epicflow')),
      f2(med(r.ratio, 'plan order')),
      f2(med(r.ratio, 'wave barrier')),
      f2(med(r.vsEpicflow, 'plan order')),
      f2(med(r.vsEpicflow, 'wave barrier')),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
  console.log('');
}

/** CPU time of one full decision on a 100-story epic, over the states of one run. */
function printDecisionTime(): void {
  const rng = seededRng(424242);
  const deps = randomEpic(rng, DEFAULT_SHAPE);
  const epic = toEpic(
    deps,
    deps.map(() => rng.logNormal(0, SIGMA)),
    deps.map((_, i) => i),
  );
  const inputs: SchedulerInput[] = [];
  simulate(epic, epicflowPolicy, (s) => inputs.push(schedulerInput(s)));
  // Warm the JIT up, then time batches: a single call is too short to time alone.
  for (let k = 0; k < 3; k++) inputs.forEach((input) => schedule(input));
  const batch = 20;
  const reps = 25;
  const perCall: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const input of inputs) {
      const t0 = performance.now();
      for (let b = 0; b < batch; b++) schedule(input);
      perCall.push((performance.now() - t0) / batch);
    }
  }
  const p99 = quantile(perCall, 0.99);
  console.log(
    `Decision time, ${STORIES}-story epic, ${inputs.length} states of one run ` +
      `(each timed ${reps} × ${batch} calls): median ${median(perCall).toFixed(3)} ms, ` +
      `p99 ${p99.toFixed(3)} ms (goal < 50 ms): ${verdict(p99 < 50)}`,
  );
}

export async function run(): Promise<void> {
  console.log(
    `${SEEDS} random epics × ${STORIES} stories, ${SLOTS} coder slots (concurrency ${SLOTS}), ` +
      `log-normal durations (median 1, σ ${SIGMA}). Lower bound = max(critical path, ` +
      `total work ÷ ${SLOTS}).\n`,
  );
  printResults('Plans written feature by feature', measure(DEFAULT_SHAPE, SEEDS, 'feature'));
  printResults(
    'Same epics, plan in a random topological order',
    measure(DEFAULT_SHAPE, SEEDS, 'random'),
  );
  printSweep();
  printDecisionTime();
}
