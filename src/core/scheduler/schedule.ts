import { EpicflowError } from '../errors.js';
import type { Halt, Story, StoryStatus } from '../model.js';
import { buildStoryGraph, chainLengthsOf } from './graph.js';
import type { StoryGraph } from './graph.js';

export interface SchedulerInput {
  /** Stories in plan order. */
  readonly stories: readonly Story[];
  /** Current status per story id; a missing id counts as 'planned'. */
  readonly status: Readonly<Record<string, StoryStatus>>;
  /** Stories in flight at most (config `concurrency`, at least 1). */
  readonly concurrency: number;
  /** The roster's free coder slots right now (Infinity when unbounded). */
  readonly freeCoderSlots: number;
  /** When set, nothing launches (a halt). */
  readonly halt?: Halt;
  /** When set, a failed story halts launches. */
  readonly failFast?: boolean;
}

export interface Hold {
  readonly id: string;
  /** `waiting for <id>` or `not started: <reason>`. */
  readonly reason: string;
}

export interface SchedulerDecision {
  /** Story ids to start now, best first. */
  readonly start: string[];
  /** Stories to record `waiting` with this reason, in plan order. */
  readonly hold: Hold[];
  /**
   * Stories recorded `waiting` whose reason no longer holds (a halt lifted, a
   * failed dependency was retried) and that do not start now: record them
   * `planned` again. Plan order.
   */
  readonly release: string[];
  /** One line explaining what runs and why not more; see `nextSummary`. */
  readonly summary: string;
  /** Nothing is active and nothing will start without outside action. */
  readonly finished: boolean;
}

/** Where a not-yet-started story stands in this decision. */
type Standing = 'ready' | 'blocked' | 'held';

/**
 * Decides which stories start now (docs/architecture.md). Pure and O(V+E) plus a sort of
 * the ready stories, so the caller can simply call it again after every event
 * with the plain statuses: holds and releases are recomputed every time.
 */
export function schedule(input: SchedulerInput): SchedulerDecision {
  checkLimits(input);
  const graph = buildStoryGraph(input.stories);
  const { ids, deps } = graph;
  const status = ids.map((id) =>
    Object.hasOwn(input.status, id) ? (input.status[id] ?? 'planned') : 'planned',
  );

  const culprit = nearestFailedAncestors(graph, status);

  const standing: (Standing | undefined)[] = ids.map((_, i) => {
    const s = status[i];
    if (s !== 'planned' && s !== 'waiting') return undefined;
    if (culprit[i] !== undefined) return 'held';
    return (deps[i] ?? []).every((d) => status[d] === 'done') ? 'ready' : 'blocked';
  });

  const active = status.filter((s) => s === 'active').length;
  const firstFailed = status.indexOf('failed');
  const haltMessage =
    input.halt?.message ??
    (input.failFast === true && firstFailed >= 0
      ? `story ${ids[firstFailed]} failed (fail-fast)`
      : undefined);

  const ready: number[] = [];
  standing.forEach((s, i) => {
    if (s === 'ready') ready.push(i);
  });
  let start: number[] = [];
  if (haltMessage === undefined && ready.length > 0) {
    const chain = chainLengthsOf(graph);
    // Critical path first; equal chains keep plan order (indexes are plan order).
    ready.sort((a, b) => (chain[b] ?? 0) - (chain[a] ?? 0) || a - b);
    const capacity = Math.min(input.concurrency - active, input.freeCoderSlots);
    // One starts when none run: an idle epic must never stall on a busy roster.
    const count = active === 0 ? Math.max(1, capacity) : Math.max(0, capacity);
    start = ready.slice(0, Math.min(count, ready.length));
  }
  const starting = new Set(start);

  const hold: Hold[] = [];
  const release: string[] = [];
  ids.forEach((id, i) => {
    const s = standing[i];
    const failed = culprit[i];
    if (s === 'held' && failed !== undefined) {
      hold.push({ id, reason: `waiting for ${failed}` });
    } else if (s !== undefined && haltMessage !== undefined) {
      hold.push({ id, reason: `not started: ${haltMessage}` });
    } else if (status[i] === 'waiting' && !starting.has(i)) {
      release.push(id);
    }
  });

  const finished = active === 0 && start.length === 0;
  const count = (want: Standing): number => standing.filter((s) => s === want).length;
  // The first blocked stories in plan order, each with the dependencies it still waits on.
  const blockedOn: BlockedStory[] = [];
  ids.forEach((id, i) => {
    if (standing[i] !== 'blocked' || blockedOn.length >= BLOCKED_NAMED) return;
    const waitsOn = (deps[i] ?? []).filter((d) => status[d] !== 'done').map((d) => ids[d] ?? '');
    blockedOn.push({ id, waitsOn });
  });
  const summary = summaryLine({
    blockedOn,
    running: active + start.length,
    concurrency: input.concurrency,
    slotsInService: active + input.freeCoderSlots,
    readyLeft: ready.length - start.length,
    blocked: count('blocked'),
    held: count('held'),
    done: status.filter((s) => s === 'done').length,
    failed: status.filter((s) => s === 'failed').length,
    haltMessage,
    finished,
  });
  return { start: start.map((i) => ids[i] ?? ''), hold, release, summary, finished };
}

/**
 * For each story, the id of its nearest failed ancestor (fewest hops; ties to
 * the first in plan order), or undefined. Only paths through unfinished
 * stories count: a merged story stops the propagation, since nothing below it
 * waits on what lies behind it any more. One pass in topological order.
 */
function nearestFailedAncestors(
  graph: StoryGraph,
  status: readonly StoryStatus[],
): (string | undefined)[] {
  const ancestor: number[] = graph.ids.map(() => -1);
  const hops: number[] = graph.ids.map(() => Infinity);
  for (const i of graph.topo) {
    if (status[i] === 'done') continue;
    for (const d of graph.deps[i] ?? []) {
      const viaDep = status[d] === 'failed';
      const a = viaDep ? d : status[d] === 'done' ? -1 : (ancestor[d] ?? -1);
      if (a < 0) continue;
      const h = viaDep ? 1 : (hops[d] ?? Infinity) + 1;
      const best = hops[i] ?? Infinity;
      if (h < best || (h === best && a < (ancestor[i] ?? -1))) {
        ancestor[i] = a;
        hops[i] = h;
      }
    }
  }
  return ancestor.map((a) => (a < 0 ? undefined : graph.ids[a]));
}

function checkLimits(input: SchedulerInput): void {
  if (!Number.isInteger(input.concurrency) || input.concurrency < 1) {
    throw new EpicflowError(
      'config',
      `concurrency must be a whole number of at least 1, got ${String(input.concurrency)}`,
    );
  }
  const slots = input.freeCoderSlots;
  if (!(slots === Infinity || (Number.isInteger(slots) && slots >= 0))) {
    throw new EpicflowError(
      'internal',
      `free coder slots must be a whole number of at least 0, got ${String(slots)}`,
    );
  }
}

/** Blocked stories the launch summary names, at most. */
const BLOCKED_NAMED = 3;

interface BlockedStory {
  readonly id: string;
  /** Its dependencies not done yet, in its plan order. */
  readonly waitsOn: readonly string[];
}

interface SummaryFacts {
  /** The first blocked stories (at most three), plan order. */
  readonly blockedOn: readonly BlockedStory[];
  readonly running: number;
  readonly concurrency: number;
  readonly slotsInService: number;
  readonly readyLeft: number;
  readonly blocked: number;
  readonly held: number;
  readonly done: number;
  readonly failed: number;
  readonly haltMessage: string | undefined;
  readonly finished: boolean;
}

/** Explains why fewer stories run than allowed, in counts that change rarely. */
function summaryLine(f: SummaryFacts): string {
  if (f.haltMessage !== undefined) {
    const still = f.running > 0 ? ` (${f.running} still running)` : '';
    return `halted: ${f.haltMessage}${still}`;
  }
  if (f.finished) {
    const parts = [`${f.done} done`];
    if (f.failed > 0) parts.push(`${f.failed} failed`);
    if (f.held > 0) parts.push(`${f.held} waiting for a failed dependency`);
    return `all stories settled: ${parts.join(', ')}`;
  }
  const parts: string[] = [];
  if (f.readyLeft > 0) {
    if (f.running >= f.concurrency) {
      parts.push(`${f.readyLeft} ready, at the concurrency limit`);
    } else if (f.slotsInService >= f.running) {
      parts.push(
        `${f.readyLeft} ready, coder slots full (${f.running} of ${f.slotsInService} busy)`,
      );
    } else {
      parts.push(`${f.readyLeft} ready, no coder slot free`);
    }
  }
  if (f.blocked > 0) {
    const named = f.blockedOn.map((b) => `${b.id} ← ${b.waitsOn.join(', ')}`);
    if (f.blocked > named.length) named.push(`+${f.blocked - named.length} more`);
    parts.push(`${f.blocked} waiting on dependencies (${named.join('; ')})`);
  }
  if (f.held > 0) parts.push(`${f.held} waiting for a failed dependency`);
  if (parts.length === 0) parts.push('no other story left to start');
  return `running ${f.running} of ${f.concurrency} allowed: ${parts.join(', ')}`;
}
