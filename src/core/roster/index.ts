/**
 * A first roster (docs/executors.md), pure: which executor codes a story, which are
 * excluded after infrastructure signals, and when the roster is exhausted.
 * The clock is passed in; the state is plain JSON, persisted as `roster.json`
 * so exclusions survive restarts.
 */
import { EpicflowError } from '../errors.js';
import { z } from 'zod';
import type { ExecutorConfig } from '../config/types.js';
import type { OutcomeClass } from '../executor.js';

type SignalKind = Exclude<OutcomeClass, 'ok' | 'failed'>;

/**
 * Why an executor is out: an infrastructure signal, its CLI not being installed
 * (out for the run), or a pause by the user (until `epicflow roster resume`).
 */
export type ExclusionKind = SignalKind | 'missing-binary' | 'paused';

/** The reason of a manual exclusion, as `epicflow roster` shows it. */
const PAUSED_REASON = 'paused by user';

export interface Exclusion {
  readonly kind: ExclusionKind;
  readonly reason: string;
  readonly since: string;
  /** When the executor may be used again (ISO); null = out for this run (or, paused, until resumed). */
  readonly until: string | null;
}

export interface RosterState {
  readonly version: 1;
  readonly exclusions: Readonly<Record<string, Exclusion>>;
  /** Recent rate-limit signals per executor (ISO times, within the window). */
  readonly rateLimits: Readonly<Record<string, readonly string[]>>;
  /** When each executor was last leased (ISO), for least-recently-used ties. */
  readonly lastUsed: Readonly<Record<string, string>>;
  /** Story id → the executor holding its coder role (per run, not persisted). */
  readonly leases: Readonly<Record<string, string>>;
}

const USAGE_LIMIT_DEFAULT_MS = 30 * 60_000;
const RATE_LIMIT_WINDOW_MS = 10 * 60_000;
const RATE_LIMIT_THRESHOLD = 3;
const RATE_LIMIT_EXCLUSION_MS = 10 * 60_000;
const OUTAGE_EXCLUSION_MS = 5 * 60_000;

export function emptyRosterState(): RosterState {
  return { version: 1, exclusions: {}, rateLimits: {}, lastUsed: {}, leases: {} };
}

const exclusionSchema = z.object({
  kind: z.enum(['usage-limit', 'rate-limited', 'outage', 'auth', 'missing-binary', 'paused']),
  reason: z.string(),
  since: z.string(),
  until: z.string().nullable(),
});
const persistedSchema = z.object({
  version: z.literal(1),
  exclusions: z.record(z.string(), exclusionSchema),
  rateLimits: z.record(z.string(), z.array(z.string())),
  lastUsed: z.record(z.string(), z.string()),
});

/**
 * State read back from `roster.json` at the start of a run. Exclusions "for the
 * run" (auth, missing binary) end with the run that saw them, because a rerun is
 * the user's way of saying they fixed it; a pause lasts until resumed. Leases are
 * never carried over. Returns null when the text is not a roster state, so the
 * caller can say so.
 */
export function restoreRosterState(json: unknown): RosterState | null {
  const parsed = persistedSchema.safeParse(json);
  if (!parsed.success) return null;
  const exclusions = Object.fromEntries(
    Object.entries(parsed.data.exclusions).filter(
      ([, e]) => e.until !== null || e.kind === 'paused',
    ),
  );
  return { ...parsed.data, exclusions, leases: {} };
}

/**
 * The persisted roster, or a typed error naming `where` when it cannot be read:
 * exclusions are never dropped silently.
 */
export function loadRosterState(json: unknown, where: string): RosterState {
  if (json === null) return emptyRosterState();
  const state = restoreRosterState(json);
  if (state === null) {
    throw new EpicflowError('state', `unreadable roster state: ${where}`, {
      details: ['delete the file to start with every executor available'],
    });
  }
  return state;
}

/** The JSON to persist: everything but the per-run leases. */
export function persistableRosterState(state: RosterState): Omit<RosterState, 'leases'> {
  const { leases: _leases, ...rest } = state;
  return rest;
}

export function activeExclusion(state: RosterState, id: string, now: Date): Exclusion | null {
  const e = state.exclusions[id];
  if (e === undefined) return null;
  if (e.until === null || Date.parse(e.until) > now.getTime()) return e;
  return null;
}

function coders(executors: readonly ExecutorConfig[]): ExecutorConfig[] {
  return executors.filter((e) => e.roles.includes('coder'));
}

function leasesOf(state: RosterState, id: string): number {
  return Object.values(state.leases).filter((v) => v === id).length;
}

function hasFreeSlot(state: RosterState, e: ExecutorConfig, now: Date): boolean {
  return activeExclusion(state, e.id, now) === null && leasesOf(state, e.id) < e.slots;
}

/** Coder slots free now: not excluded, not leased. */
export function freeCoderSlots(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  now: Date,
): number {
  return coders(executors)
    .filter((e) => activeExclusion(state, e.id, now) === null)
    .reduce((n, e) => n + Math.max(0, e.slots - leasesOf(state, e.id)), 0);
}

/** Lowest priority first, then least recently used (never used first), then config order. */
function rank(executors: readonly ExecutorConfig[], state: RosterState): ExecutorConfig[] {
  const order = new Map(executors.map((e, i) => [e.id, i]));
  const used = (e: ExecutorConfig): number => {
    const t = state.lastUsed[e.id];
    return t === undefined ? -Infinity : Date.parse(t);
  };
  return [...executors].sort(
    (a, b) =>
      a.priority - b.priority ||
      used(a) - used(b) ||
      (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0),
  );
}

function take(state: RosterState, story: string, id: string, now: Date): RosterState {
  return {
    ...state,
    leases: { ...state.leases, [story]: id },
    lastUsed: { ...state.lastUsed, [id]: now.toISOString() },
  };
}

interface LeaseResult {
  readonly state: RosterState;
  /** Null when no coder has a free slot now. */
  readonly executor: ExecutorConfig | null;
}

/**
 * Lease a coder for a story's life: the preferred executor (the story's
 * `executor`, or the one it had before a resume) if free, else the lowest
 * priority, ties to the least recently used. A story already holding a lease keeps it.
 */
export function leaseCoder(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  request: { readonly story: string; readonly preferred?: string | undefined; readonly now: Date },
): LeaseResult {
  const held = state.leases[request.story];
  const heldExecutor = executors.find((e) => e.id === held);
  if (heldExecutor !== undefined) return { state, executor: heldExecutor };
  const pool = coders(executors);
  const preferred = pool.find((e) => e.id === request.preferred);
  if (preferred !== undefined && hasFreeSlot(state, preferred, request.now)) {
    return { state: take(state, request.story, preferred.id, request.now), executor: preferred };
  }
  const pick = rank(pool, state).find((e) => hasFreeSlot(state, e, request.now));
  if (pick === undefined) return { state, executor: null };
  return { state: take(state, request.story, pick.id, request.now), executor: pick };
}

export function releaseLease(state: RosterState, story: string): RosterState {
  if (!(story in state.leases)) return state;
  const { [story]: _gone, ...leases } = state.leases;
  return { ...state, leases };
}

/**
 * Handover: the next coder for a story whose executor stopped, skipping those it
 * already had. One with a free slot is preferred; otherwise any executor that is
 * not excluded takes over, because the story already holds a seat and dropping
 * its work would be worse than briefly exceeding a slot count.
 */
export function nextExecutor(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  request: { readonly story: string; readonly excluding: readonly string[]; readonly now: Date },
): LeaseResult {
  const released = releaseLease(state, request.story);
  const candidates = rank(coders(executors), released).filter(
    (e) =>
      !request.excluding.includes(e.id) && activeExclusion(released, e.id, request.now) === null,
  );
  const pick =
    candidates.find((e) => leasesOf(released, e.id) < e.slots) ?? candidates[0] ?? undefined;
  if (pick === undefined) return { state: released, executor: null };
  return { state: take(released, request.story, pick.id, request.now), executor: pick };
}

function describeSignal(kind: ExclusionKind): string {
  switch (kind) {
    case 'usage-limit':
      return 'usage limit reached';
    case 'rate-limited':
      return `rate limited ${RATE_LIMIT_THRESHOLD} times in 10 minutes`;
    case 'outage':
      return 'service outage';
    case 'auth':
      return 'authentication failed';
    case 'missing-binary':
      return 'not installed';
    case 'paused':
      return PAUSED_REASON;
  }
}

/**
 * Record an infrastructure signal from a turn. Work quality (`failed`) never
 * excludes an executor. Returns the new state and the exclusion now in force, if any.
 */
export function recordSignal(
  state: RosterState,
  signal: {
    readonly executor: string;
    readonly outcome: OutcomeClass;
    readonly now: Date;
    readonly resetAt?: string | undefined;
    readonly detail?: string | undefined;
  },
): { state: RosterState; exclusion: Exclusion | null } {
  const { executor, outcome, now } = signal;
  if (outcome === 'ok' || outcome === 'failed') return { state, exclusion: null };
  const since = now.toISOString();
  const at = (ms: number): string => new Date(now.getTime() + ms).toISOString();
  let until: string | null;
  let next = state;
  switch (outcome) {
    case 'usage-limit': {
      const reset = signal.resetAt === undefined ? NaN : Date.parse(signal.resetAt);
      until =
        Number.isFinite(reset) && reset > now.getTime()
          ? new Date(reset).toISOString()
          : at(USAGE_LIMIT_DEFAULT_MS);
      break;
    }
    case 'rate-limited': {
      const recent = [...(state.rateLimits[executor] ?? []), since].filter(
        (t) => now.getTime() - Date.parse(t) < RATE_LIMIT_WINDOW_MS,
      );
      next = { ...state, rateLimits: { ...state.rateLimits, [executor]: recent } };
      if (recent.length < RATE_LIMIT_THRESHOLD) return { state: next, exclusion: null };
      until = at(RATE_LIMIT_EXCLUSION_MS);
      next = { ...next, rateLimits: { ...next.rateLimits, [executor]: [] } };
      break;
    }
    case 'outage':
      until = at(OUTAGE_EXCLUSION_MS);
      break;
    case 'auth':
      until = null;
      break;
  }
  const reason =
    signal.detail !== undefined && signal.detail.trim().length > 0
      ? `${describeSignal(outcome)}: ${signal.detail.trim().split('\n')[0] ?? ''}`.slice(0, 200)
      : describeSignal(outcome);
  const exclusion: Exclusion = { kind: outcome, reason, since, until };
  return {
    state: { ...next, exclusions: { ...next.exclusions, [executor]: exclusion } },
    exclusion,
  };
}

export interface RosterExhausted {
  /** One line naming each coder's reason and when it returns. */
  readonly message: string;
  /** The earliest time a coder returns (ISO), when any will return this run. */
  readonly until?: string;
}

/** When an excluded executor returns, for people. */
export function returnTime(e: Exclusion): string {
  if (e.until !== null) return `back at ${e.until.slice(0, 16).replace('T', ' ')} UTC`;
  return e.kind === 'paused' ? 'until `epicflow roster resume`' : 'out for this run';
}

/** Null while some executor can take the coder role; else who is out, why, until when. */
export function rosterExhausted(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  now: Date,
): RosterExhausted | null {
  const pool = coders(executors);
  if (pool.length === 0) return { message: 'roster exhausted: no executor has the coder role' };
  const out = pool.map((e) => ({ id: e.id, exclusion: activeExclusion(state, e.id, now) }));
  if (out.some((o) => o.exclusion === null)) return null;
  const parts = out.map(
    (o) => `${o.id} (${o.exclusion?.reason ?? ''}; ${o.exclusion ? returnTime(o.exclusion) : ''})`,
  );
  const times = out
    .map((o) => o.exclusion?.until)
    .filter((t): t is string => typeof t === 'string')
    .sort();
  const message = `roster exhausted: ${parts.join(', ')}`;
  return times[0] === undefined ? { message } : { message, until: times[0] };
}

/**
 * The executor's CLI is not installed: out for the rest of the run, with the
 * install hint as the reason, so the story moves on to the next executor.
 */
export function recordMissingBinary(
  state: RosterState,
  signal: { readonly executor: string; readonly detail: string; readonly now: Date },
): { state: RosterState; exclusion: Exclusion } {
  const hint = signal.detail.trim().split('\n')[0] ?? '';
  const exclusion: Exclusion = {
    kind: 'missing-binary',
    reason: hint === '' ? describeSignal('missing-binary') : hint.slice(0, 200),
    since: signal.now.toISOString(),
    until: null,
  };
  return {
    state: { ...state, exclusions: { ...state.exclusions, [signal.executor]: exclusion } },
    exclusion,
  };
}

/** A manual exclusion (`epicflow roster pause <id>`): out until resumed, across runs. */
export function pauseExecutor(state: RosterState, executor: string, now: Date): RosterState {
  const exclusion: Exclusion = {
    kind: 'paused',
    reason: PAUSED_REASON,
    since: now.toISOString(),
    until: null,
  };
  return { ...state, exclusions: { ...state.exclusions, [executor]: exclusion } };
}

/** Ends any exclusion of the executor (`epicflow roster resume <id>`). */
export function resumeExecutor(state: RosterState, executor: string): RosterState {
  if (!(executor in state.exclusions)) return state;
  const { [executor]: _gone, ...exclusions } = state.exclusions;
  const { [executor]: _rates, ...rateLimits } = state.rateLimits;
  return { ...state, exclusions, rateLimits };
}

/**
 * Pauses written by `epicflow roster` while a run holds the roster in memory:
 * the file's pauses win (added or lifted), every other exclusion stays the run's.
 */
export function syncPauses(state: RosterState, onDisk: RosterState | null): RosterState {
  const exclusions: Record<string, Exclusion> = {};
  for (const [id, e] of Object.entries(state.exclusions)) {
    if (e.kind !== 'paused' || onDisk?.exclusions[id]?.kind === 'paused') exclusions[id] = e;
  }
  for (const [id, e] of Object.entries(onDisk?.exclusions ?? {})) {
    if (e.kind === 'paused') exclusions[id] = e;
  }
  return { ...state, exclusions };
}

/** Busy coder seats of an executor now. */
export function busySlots(state: RosterState, executor: string): number {
  return leasesOf(state, executor);
}

/**
 * The next moment capacity changes by itself (an exclusion expiring), so a
 * story waiting for a slot is woken then; null when no exclusion will expire.
 */
export function nextCapacityChange(state: RosterState, now: Date): Date | null {
  const times = Object.values(state.exclusions)
    .map((e) => (e.until === null ? NaN : Date.parse(e.until)))
    .filter((t) => Number.isFinite(t) && t > now.getTime())
    .sort((a, b) => a - b);
  return times[0] === undefined ? null : new Date(times[0]);
}

export interface HelperPick {
  readonly executor: ExecutorConfig;
  /** False when the only executor that could serve is the story's own coder. */
  readonly independent: boolean;
}

/**
 * An executor for one judge, verifier or planner call: one with the role that
 * is not excluded, avoiding the story's coders when another can serve
 * (independence beats priority); the preferred one (the configured judge)
 * first, then the lowest priority, ties to the least recently used. Null when
 * none can serve. A planner call has no coders to avoid (`avoid: []`).
 */
export function pickHelper(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  request: {
    readonly role: 'judge' | 'verifier' | 'planner' | 'reviewer';
    readonly preferred?: string | undefined;
    readonly avoid: readonly string[];
    readonly now: Date;
  },
): HelperPick | null {
  const able = rank(
    executors.filter((e) => e.roles.includes(request.role)),
    state,
  ).filter((e) => activeExclusion(state, e.id, request.now) === null);
  const preferFirst = (list: ExecutorConfig[]): ExecutorConfig[] => [
    ...list.filter((e) => e.id === request.preferred),
    ...list.filter((e) => e.id !== request.preferred),
  ];
  const others = preferFirst(able.filter((e) => !request.avoid.includes(e.id)));
  if (others[0] !== undefined) return { executor: others[0], independent: true };
  const own = preferFirst(able)[0];
  return own === undefined ? null : { executor: own, independent: false };
}
