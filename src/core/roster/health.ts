/**
 * An executor's `health` URL ends an outage early: while it is out for an outage, its URL
 * is asked every 15 seconds, and a 2xx answer brings it back at once (otherwise the outage
 * lasts its 5 minutes). Pure: which URLs are due, and the state once one answered.
 */
import type { ExecutorConfig } from '../config/types.js';
import { activeExclusion, resumeExecutor, type RosterState } from './index.js';

/** How often an excluded executor's health URL is asked. */
const HEALTH_INTERVAL_MS = 15_000;

export interface HealthCheck {
  readonly id: string;
  readonly url: string;
}

/**
 * The executors out for an outage that have a health URL and were not asked within
 * the interval (`asked`: when each was last asked, ms).
 */
export function dueHealthChecks(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  now: Date,
  asked: ReadonlyMap<string, number>,
): HealthCheck[] {
  return executors.flatMap((e) => {
    if (e.health === undefined) return [];
    if (activeExclusion(state, e.id, now)?.kind !== 'outage') return [];
    const last = asked.get(e.id);
    if (last !== undefined && now.getTime() - last < HEALTH_INTERVAL_MS) return [];
    return [{ id: e.id, url: e.health }];
  });
}

/**
 * The next moment a health URL is due, so a run waiting for capacity asks it then; null
 * when no executor is out for an outage with a health URL.
 */
export function nextHealthCheck(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  now: Date,
  asked: ReadonlyMap<string, number>,
): Date | null {
  const times = executors
    .filter((e) => e.health !== undefined && activeExclusion(state, e.id, now)?.kind === 'outage')
    .map((e) => (asked.get(e.id) ?? now.getTime()) + HEALTH_INTERVAL_MS)
    .sort((a, b) => a - b);
  return times[0] === undefined ? null : new Date(Math.max(times[0], now.getTime()));
}

/** The state once the executor's health URL answered 2xx: its outage is over. */
export function healthy(state: RosterState, id: string, now: Date): RosterState {
  return activeExclusion(state, id, now)?.kind === 'outage' ? resumeExecutor(state, id) : state;
}
