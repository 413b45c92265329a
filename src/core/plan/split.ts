/**
 * A story that proved too big, split (docs/planning.md, "A story too big is split"): its
 * entry is replaced, where it stood, by 2–4 smaller stories the planner drafted.
 *
 * - The new stories get ids `<story>-<id>` (an id the planner already prefixed stays),
 *   so none can take the id, branch and record of another story.
 * - Each inherits the replaced story's dependencies (it comes in its place: what had
 *   to be merged before it still has to be); its dependencies on the other new stories
 *   are renamed to match.
 * - Every story that depended on the replaced one depends on all the new stories.
 * - Each new story owns only paths within what the replaced story owned: the split
 *   divides the story's perimeter, it never grows it.
 *
 * Nothing else in the plan changes. The result is checked by the one plan validator.
 */
import { EpicflowError } from '../errors.js';
import type { Plan, Story } from '../model.js';
import { isWithin } from '../paths.js';
import { assemblePlan } from './parse.js';
import { MAX_ID_LENGTH, type PlanOptions, type PlanResult, type Violation } from './types.js';

/** A split has at least this many stories… */
export const SPLIT_MIN_STORIES = 2;
/** …and at most this many. */
export const SPLIT_MAX_STORIES = 4;

/** The id a split of `story` gives a new story the planner called `id`. */
export function splitId(story: string, id: string): string {
  const prefix = `${story}-`;
  const bare = id.startsWith(prefix) ? id.slice(prefix.length) : id;
  const whole = `${prefix}${bare}`;
  return whole.length > MAX_ID_LENGTH ? whole.slice(0, MAX_ID_LENGTH).replace(/-+$/, '') : whole;
}

interface SplitResult {
  readonly result: PlanResult;
  /** The ids the new stories got, in the planner's order. */
  readonly added: readonly string[];
}

type Entry = Readonly<Record<string, unknown>>;

function stringList(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The plan with `story` replaced by `parts` (see the module comment), validated. */
export function splitStory(
  current: Plan,
  story: string,
  parts: readonly Entry[],
  options: PlanOptions = {},
): SplitResult {
  const original = current.stories.find((s) => s.id === story);
  if (original === undefined) {
    throw new EpicflowError('internal', `a split of "${story}": the plan has no such story`);
  }
  if (parts.length < SPLIT_MIN_STORIES || parts.length > SPLIT_MAX_STORIES) {
    const message = `a split of "${story}" has ${SPLIT_MIN_STORIES} to ${SPLIT_MAX_STORIES} stories, not ${parts.length}`;
    return { result: refusedResult([{ code: 'schema', message }], parts.length), added: [] };
  }
  const own = new Map<string, string>();
  for (const p of parts) if (typeof p['id'] === 'string') own.set(p['id'], splitId(story, p['id']));
  const added = [...own.values()];
  const renamed: Entry[] = parts.map((p) => {
    const out: Record<string, unknown> = { ...p };
    if (typeof p['id'] === 'string') out['id'] = own.get(p['id']);
    const deps = p['dependsOn'];
    // A malformed `dependsOn` is left as written so that its schema error shows.
    if (deps !== undefined && !Array.isArray(deps)) return out;
    const mine = stringList(deps).map((d) => (typeof d === 'string' ? (own.get(d) ?? d) : d));
    out['dependsOn'] = [...new Set([...original.dependsOn, ...mine])];
    return out;
  });
  const entries: (Story | Entry)[] = [];
  for (const s of current.stories) {
    if (s.id === story) {
      entries.push(...renamed);
      continue;
    }
    entries.push(
      s.dependsOn.includes(story)
        ? { ...s, dependsOn: [...new Set(s.dependsOn.flatMap((d) => (d === story ? added : [d])))] }
        : s,
    );
  }
  const result = assemblePlan(entries, {}, options);
  if (!result.ok) return { result, added };
  const outside = result.plan.stories
    .filter((s) => added.includes(s.id))
    .flatMap((s) =>
      s.owns
        .filter((p) => !original.owns.some((o) => isWithin(p, o)))
        .map((p): Violation => ({
          code: 'schema',
          story: s.id,
          field: 'owns',
          message: `story "${s.id}" owns "${p}", outside what "${story}" owned (${original.owns.join(', ')}): a split divides the story's paths, it never adds to them`,
        })),
    );
  if (outside.length > 0) return { result: refusedResult(outside, entries.length), added };
  return { result, added };
}

function refusedResult(violations: readonly Violation[], storyCount: number): PlanResult {
  return { ok: false, violations, storyCount };
}
