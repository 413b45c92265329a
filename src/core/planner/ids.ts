/**
 * Keeping story ids on a re-plan. A story's progress (its branch, its merge,
 * its record) is keyed by its id, so a story the planner proposes again
 * unchanged must keep its id even when the planner renamed it.
 *
 * The rule: a proposed story takes the id of a previous story whose entry is
 * the same in everything but the id: title, description, owns, reads,
 * provides, acceptance, executor, testsChange, and dependsOn once the ids of
 * its dependencies are mapped the same way (so a chain of unchanged stories
 * keeps all its ids; a dependency that is not kept counts under the id it ends
 * up with). A story that kept its own id and is unchanged stays as it is.
 * Among equal candidates, a story's own id wins, then plan order. A changed
 * story keeps the id the planner gave it; if that id now belongs to a kept
 * story, it gets the next free `<id>-2`, `<id>-3`, … (never an id the previous
 * plan had: that would inherit another story's progress).
 */
import type { Plan, Story } from '../model.js';
import { canonicalJson } from '../plan/hash.js';
import { MAX_ID_LENGTH } from '../plan/types.js';
import { buildPlan } from '../plan/validate.js';

export interface KeptIds {
  /** The proposed plan with ids kept (and dependencies rewritten to match). */
  readonly plan: Plan;
  /** Each story whose proposed id changed: `from` the planner's id `to` the id it now has. */
  readonly renamed: readonly { readonly from: string; readonly to: string }[];
}

/** The entry without its id, with dependencies as given (sets sorted, as the story hash has them). */
function entryKey(s: Story, dependsOn: readonly string[]): string {
  return canonicalJson({
    title: s.title,
    description: s.description,
    owns: [...new Set(s.owns)].sort(),
    reads: [...new Set(s.reads)].sort(),
    dependsOn: [...new Set(dependsOn)].sort(),
    provides: [...s.provides],
    acceptance: [...s.acceptance],
    executor: s.executor ?? null,
    testsChange: s.testsChange,
    tasks: s.tasks,
  });
}

/** Stories in an order where each comes after its dependencies (waves, in plan order). */
function dependencyOrder(plan: Plan): Story[] {
  const byId = new Map(plan.stories.map((s) => [s.id, s]));
  const ordered = plan.waves.flatMap((w) => w.map((id) => byId.get(id)).filter((s) => !!s));
  // A plan with a cycle has no waves for it; those stories go last, unmatched deps and all.
  const placed = new Set(ordered.map((s) => s.id));
  return [...ordered, ...plan.stories.filter((s) => !placed.has(s.id))];
}

function freeId(base: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const id = `${base.slice(0, MAX_ID_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(id)) return id;
  }
}

/** The proposed plan with the ids of unchanged previous stories kept (see the rule above). */
export function keepStoryIds(previous: Plan, proposed: Plan): KeptIds {
  const previousById = new Map(previous.stories.map((s) => [s.id, s]));
  const previousKeys = new Map<string, string[]>();
  for (const s of previous.stories) {
    const key = entryKey(s, s.dependsOn);
    previousKeys.set(key, [...(previousKeys.get(key) ?? []), s.id]);
  }
  const order = dependencyOrder(proposed);
  // Pairs (proposed id, previous id) found wrong once the final ids were known.
  const refused = new Set<string>();
  for (;;) {
    const matched = match(order, previousKeys, refused);
    const finalIds = finalIdsOf(proposed, previous, matched);
    // A match assumed that an unmatched dependency keeps its id; one renamed after all
    // (its id went to a kept story) breaks the matches that relied on it: try again without them.
    const wrong = [...matched].filter(([from, to]) => {
      const deps = (proposedById(proposed, from)?.dependsOn ?? []).map((d) => finalIds.get(d) ?? d);
      return !sameSet(deps, previousById.get(to)?.dependsOn ?? []);
    });
    if (wrong.length === 0) return rewrite(proposed, finalIds);
    for (const [from, to] of wrong) refused.add(pair(from, to));
  }
}

/** Pass 1: unchanged stories matched to previous ids, dependencies first. */
function match(
  stories: readonly Story[],
  keys: ReadonlyMap<string, readonly string[]>,
  no: ReadonlySet<string>,
): Map<string, string> {
  const matched = new Map<string, string>();
  const claimed = new Set<string>();
  for (const s of stories) {
    const deps = s.dependsOn.map((d) => matched.get(d) ?? d);
    const candidates = (keys.get(entryKey(s, deps)) ?? []).filter(
      (id) => !claimed.has(id) && !no.has(pair(s.id, id)),
    );
    const pick = candidates.includes(s.id) ? s.id : candidates[0];
    if (pick === undefined) continue;
    matched.set(s.id, pick);
    claimed.add(pick);
  }
  return matched;
}

/** A (proposed id, previous id) pair, as a set key. */
function pair(from: string, to: string): string {
  return `${from}\u0000${to}`;
}

function proposedById(plan: Plan, id: string): Story | undefined {
  return plan.stories.find((s) => s.id === id);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/**
 * Pass 2: the final ids. A changed story keeps its id unless a kept story now
 * holds it; a fresh id is none of the previous ids (it would inherit their
 * progress) nor a proposed one.
 */
function finalIdsOf(
  proposed: Plan,
  previous: Plan,
  matched: ReadonlyMap<string, string>,
): Map<string, string> {
  const kept = new Set(matched.values());
  const reserved = new Set([
    ...kept,
    ...previous.stories.map((s) => s.id),
    ...proposed.stories.map((s) => s.id),
  ]);
  const finalIds = new Map<string, string>(matched);
  for (const s of proposed.stories) {
    if (finalIds.has(s.id)) continue;
    let id = s.id;
    if (kept.has(id)) {
      id = freeId(s.id, reserved);
      reserved.add(id);
    }
    finalIds.set(s.id, id);
  }
  return finalIds;
}

function rewrite(proposed: Plan, finalIds: ReadonlyMap<string, string>): KeptIds {
  const renamed = proposed.stories
    .filter((s) => finalIds.get(s.id) !== s.id)
    .map((s) => ({ from: s.id, to: finalIds.get(s.id) ?? s.id }));
  if (renamed.length === 0) return { plan: proposed, renamed };
  const stories = proposed.stories.map((s) => ({
    ...s,
    id: finalIds.get(s.id) ?? s.id,
    dependsOn: s.dependsOn.map((d) => finalIds.get(d) ?? d),
  }));
  return { plan: buildPlan(stories), renamed };
}
