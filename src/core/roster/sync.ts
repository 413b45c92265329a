/**
 * Roster exclusions are shared by every job of an epic (docs/executors.md): a job
 * starts from the exclusions on the state branch and merges its own back with
 * a compare-and-swap write. Exclusions "for this run" (no end time) stay with
 * the job: across jobs they would never end.
 */
import type { Exclusion, RosterState } from './index.js';
import { emptyRosterState, restoreRosterState } from './index.js';

export type SharedRoster = Omit<RosterState, 'leases'>;

export const ROSTER_DOC = 'roster';

function later(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

/** The shared state as this job may start from it (unknown shapes count as empty). */
export function startingRoster(shared: unknown): SharedRoster {
  const { leases: _l, ...rest } = restoreRosterState(shared) ?? emptyRosterState();
  return rest;
}

/** Shared ∪ ours: the newest exclusion per executor, rate-limit signals and last use joined. */
export function mergeRoster(shared: unknown, ours: SharedRoster): SharedRoster {
  const base = startingRoster(shared);
  const exclusions: Record<string, Exclusion> = { ...base.exclusions };
  for (const [id, e] of Object.entries(ours.exclusions)) {
    if (e.until === null) continue;
    const current = exclusions[id];
    if (current === undefined || Date.parse(e.since) >= Date.parse(current.since))
      exclusions[id] = e;
  }
  const rateLimits: Record<string, string[]> = {};
  for (const id of new Set([...Object.keys(base.rateLimits), ...Object.keys(ours.rateLimits)])) {
    rateLimits[id] = [
      ...new Set([...(base.rateLimits[id] ?? []), ...(ours.rateLimits[id] ?? [])]),
    ].sort();
  }
  const lastUsed: Record<string, string> = { ...base.lastUsed };
  for (const [id, at] of Object.entries(ours.lastUsed)) {
    const t = later(lastUsed[id], at);
    if (t !== undefined) lastUsed[id] = t;
  }
  return { version: 1, exclusions, rateLimits, lastUsed };
}
