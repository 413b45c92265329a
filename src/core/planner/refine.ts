/**
 * A refine round (`/refine <feedback>`, docs/planning.md): the planner answers with
 * ADDITIONAL stories only, and the plan as it stands is kept exactly. Its stories get
 * ids `r<n>-<id>` (n = the refine round), so no new story can take an existing id
 * (and inherit its progress); a dependency naming one of the answer's own ids is
 * renamed the same way, one naming a current story is kept. The combined plan —
 * current stories first, unchanged, then the new ones — is checked by the plan
 * validator like any plan: an overlap with an existing story's `owns`, a cycle or a
 * protected path refuses it.
 */
import YAML from 'yaml';
import { fenceBlock } from '../epic/sanitize.js';
import type { Plan } from '../model.js';
import { extractPlanBlocks } from '../plan/extract.js';
import { assemblePlan, parsePlan } from '../plan/parse.js';
import { MAX_ID_LENGTH } from '../plan/types.js';
import type { PlanOptions } from '../plan/types.js';
import type { PlannerAnswer } from './answer.js';
import { readPlannerAnswer } from './answer.js';

/** The prefix of the ids refine round `round` gives its new stories. */
export function refinePrefix(round: number): string {
  return `r${round}-`;
}

/**
 * The id a refine round gives a story the planner called `id`: prefixed (once: an id
 * the planner already prefixed for this round stays), shortened to the id length limit.
 */
export function refineId(round: number, id: string): string {
  const prefix = refinePrefix(round);
  const bare = id.startsWith(prefix) ? id.slice(prefix.length) : id;
  const room = MAX_ID_LENGTH - prefix.length;
  const short = bare.length > room ? bare.slice(0, room).replace(/-+$/, '') : bare;
  return `${prefix}${short}`;
}

interface RefineAnswer extends PlannerAnswer {
  /** The ids the new stories got, in answer order (empty when the answer had none readable). */
  readonly added: readonly string[];
  /**
   * What of the feedback the planner could not place as stories (unclear, or not for a
   * story), one line each with its question for the writer: the block's `notPlanned`.
   */
  readonly notPlanned: readonly string[];
}

/** Longest `notPlanned` line kept, and how many lines. */
const NOT_PLANNED_MAX_CHARS = 500;
const NOT_PLANNED_MAX_LINES = 20;

/** The block's `notPlanned` list: strings (or `{item, question}`), each made one line. */
function notPlannedOf(doc: unknown): string[] {
  const list = isRecord(doc) ? doc['notPlanned'] : undefined;
  if (!Array.isArray(list)) return [];
  return list
    .map((e: unknown) => {
      if (typeof e === 'string') return e;
      if (isRecord(e)) {
        const item = typeof e['item'] === 'string' ? e['item'] : '';
        const question = typeof e['question'] === 'string' ? e['question'] : '';
        return question === '' ? item : `${item} (${question})`;
      }
      return '';
    })
    .map((l) => l.replace(/\s+/g, ' ').trim().slice(0, NOT_PLANNED_MAX_CHARS))
    .filter((l) => l !== '')
    .slice(0, NOT_PLANNED_MAX_LINES);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The answer's stories renamed for the round, appended to the current plan, and the
 * whole validated. An answer that is not a `stories:` list at all is refused as the
 * validator refuses it alone (no block, bad YAML, wrong shape).
 */
export function readRefineAnswer(
  finalMessage: string,
  current: Plan,
  round: number,
  options: PlanOptions,
): RefineAnswer {
  const last = extractPlanBlocks(finalMessage).at(-1);
  if (last === undefined) {
    return { ...readPlannerAnswer(finalMessage, options), added: [], notPlanned: [] };
  }
  let doc: unknown;
  try {
    doc = YAML.parse(last.content);
  } catch {
    doc = undefined;
  }
  const entries = isRecord(doc) && Array.isArray(doc['stories']) ? doc['stories'] : undefined;
  const notPlanned = notPlannedOf(doc);
  if (entries !== undefined && entries.length === 0 && notPlanned.length > 0) {
    // Nothing to add, every item asked back: the plan as it stands, and the questions.
    return {
      yaml: last.content,
      result: assemblePlan(current.stories, {}, options),
      added: [],
      notPlanned,
    };
  }
  if (entries === undefined || entries.length === 0 || !entries.every(isRecord)) {
    const alone = parsePlan(fenceBlock(last.content, 'epicflow'), options);
    const result = alone.ok
      ? {
          ok: false as const,
          storyCount: 0,
          violations: [{ code: 'schema' as const, message: 'the answer has no stories to add' }],
        }
      : alone;
    return { yaml: last.content, result, added: [], notPlanned };
  }
  const combined = combineRefinement(entries, round);
  return {
    yaml: last.content,
    result: assemblePlan([...current.stories, ...combined.entries], {}, options),
    added: combined.added,
    notPlanned,
  };
}

/** The answer's entries with the round's ids and their dependencies among them renamed to match. */
function combineRefinement(
  entries: readonly Readonly<Record<string, unknown>>[],
  round: number,
): {
  readonly entries: readonly Readonly<Record<string, unknown>>[];
  readonly added: readonly string[];
} {
  const own = new Map<string, string>();
  for (const e of entries) {
    if (typeof e['id'] === 'string') own.set(e['id'], refineId(round, e['id']));
  }
  const renamed = entries.map((e) => {
    const out: Record<string, unknown> = { ...e };
    if (typeof e['id'] === 'string') out['id'] = own.get(e['id']);
    const deps = e['dependsOn'];
    if (Array.isArray(deps)) {
      // The answer's own ids win; a current story's id is kept; anything else is left
      // for the validator to name (unknown-dependency).
      out['dependsOn'] = deps.map((d: unknown) =>
        typeof d === 'string' && own.has(d) ? own.get(d) : d,
      );
    }
    return out;
  });
  return { entries: renamed, added: [...own.values()] };
}
