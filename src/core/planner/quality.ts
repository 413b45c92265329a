/**
 * Quality checks of a valid plan, beyond the plan format's rules: deterministic
 * and pure, one line each with a stable code, like the validator's violations.
 * They are shown as warnings and fed back to the planner; those marked
 * `mustFix` refuse the plan like a violation does (the configuration could not
 * run it as it is).
 */
import type { Plan } from '../model.js';
import { overlaps } from '../paths.js';

export const QUALITY_CODES = [
  'too-many-stories-for-config',
  'unknown-executor',
  'broad-owns',
  'unknown-read',
  'no-acceptance',
  'no-parallelism',
] as const;

export type QualityCode = (typeof QUALITY_CODES)[number];

/** Codes that refuse a drafted plan: the configuration could not run it. */
const MUST_FIX_CODES: ReadonlySet<QualityCode> = new Set([
  'too-many-stories-for-config',
  'unknown-executor',
]);

export interface QualityWarning {
  readonly code: QualityCode;
  readonly message: string;
  readonly story?: string;
  /** True when the plan is refused until this is fixed. */
  readonly mustFix: boolean;
}

/**
 * A story owning more than this share of the repository's files is too broad
 * (it leaves nothing for parallel stories and every overlap check fails on it).
 */
export const BROAD_OWNS_SHARE = 0.5;
/** The share is only judged in repositories with at least this many files; `.` always is. */
const BROAD_OWNS_MIN_FILES = 20;
/** A plan of at least this many stories that is one chain runs nothing in parallel. */
export const NO_PARALLELISM_MIN_STORIES = 5;

interface QualityOptions {
  /** Every file of the repository at the planned commit. */
  readonly files: readonly string[];
  /** `planner.maxStories` of the configuration. */
  readonly maxStories: number;
  /** Ids of the executors with the coder role (a story's `executor` must name one). */
  readonly coders: readonly string[];
}

const quote = (s: string): string => JSON.stringify(s);

/** Every file and every folder above one, so a prefix is one lookup. */
function presentPaths(files: readonly string[]): Set<string> {
  const present = new Set<string>();
  for (const file of files) {
    for (let at = file.length; at > 0; at = file.lastIndexOf('/', at - 1)) {
      const prefix = file.slice(0, at);
      if (present.has(prefix)) break;
      present.add(prefix);
    }
  }
  return present;
}

/**
 * How many files each story owns, in one pass over the files: in a valid plan
 * no two stories own overlapping paths, so a file's first owned ancestor is its
 * only owner.
 */
function ownedCounts(stories: Plan['stories'], files: readonly string[]): number[] {
  const owner = new Map<string, number>();
  stories.forEach((s, i) => s.owns.forEach((p) => owner.set(p, i)));
  const counts = stories.map(() => 0);
  for (const file of files) {
    for (let at = file.length; at > 0; at = file.lastIndexOf('/', at - 1)) {
      const i = owner.get(file.slice(0, at));
      if (i !== undefined) {
        counts[i] = (counts[i] ?? 0) + 1;
        break;
      }
    }
  }
  return counts;
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** The checks, in the order of `QUALITY_CODES`; one warning per finding. */
export function checkPlanQuality(plan: Plan, options: QualityOptions): QualityWarning[] {
  const out: QualityWarning[] = [];
  const add = (code: QualityCode, message: string, story?: string): void => {
    out.push({
      code,
      message,
      ...(story === undefined ? {} : { story }),
      mustFix: MUST_FIX_CODES.has(code),
    });
  };
  const { stories } = plan;

  if (stories.length > options.maxStories) {
    add(
      'too-many-stories-for-config',
      `the plan has ${stories.length} stories; the configuration allows at most ${options.maxStories} (planner.maxStories): merge small stories`,
    );
  }

  const coders = new Set(options.coders);
  for (const s of stories) {
    if (s.executor !== undefined && !coders.has(s.executor)) {
      const list = options.coders.length > 0 ? options.coders.join(', ') : 'none';
      add(
        'unknown-executor',
        `story ${quote(s.id)}: executor ${quote(s.executor)} is not a coder of the configuration (coders: ${list}); name one of them or leave executor out`,
        s.id,
      );
    }
  }

  const total = options.files.length;
  const owned = total < BROAD_OWNS_MIN_FILES ? [] : ownedCounts(stories, options.files);
  stories.forEach((s, i) => {
    if (s.owns.includes('.')) {
      add(
        'broad-owns',
        `story ${quote(s.id)}: owns ".", the whole repository: own only the paths it changes`,
        s.id,
      );
      return;
    }
    if (total < BROAD_OWNS_MIN_FILES) return;
    const share = (owned[i] ?? 0) / total;
    if (share > BROAD_OWNS_SHARE) {
      add(
        'broad-owns',
        `story ${quote(s.id)}: owns ${s.owns.map(quote).join(', ')}, ${percent(share)} of the repository's ${total} files (more than ${percent(BROAD_OWNS_SHARE)}): own only the paths it changes`,
        s.id,
      );
    }
  });

  const present = presentPaths(options.files);
  for (const s of stories) {
    for (const r of s.reads) {
      if (r === '.' || present.has(r)) continue;
      // A path another story creates is fine to read (it depends on that story).
      if (stories.some((o) => o.id !== s.id && o.owns.some((p) => overlaps(p, r)))) continue;
      add(
        'unknown-read',
        `story ${quote(s.id)}: reads ${quote(r)}, which is not in the repository and no story owns it`,
        s.id,
      );
    }
  }

  for (const s of stories) {
    if (s.acceptance.length === 0) {
      add(
        'no-acceptance',
        `story ${quote(s.id)}: no acceptance criteria: add observable "done when" checks`,
        s.id,
      );
    }
  }

  if (stories.length >= NO_PARALLELISM_MIN_STORIES && plan.waves.length === stories.length) {
    add(
      'no-parallelism',
      `the ${stories.length} stories form one chain (${plan.waves.length} waves): none can run in parallel; depend only on stories whose work is really needed first`,
    );
  }
  return out;
}
