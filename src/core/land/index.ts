/**
 * Landing, pure: which stories still keep an epic from landing, where a merge
 * left conflict markers, the durable record of each landing (`land.json`) and
 * the next step named when one fails.
 */
import { z } from 'zod';
import { EpicflowError } from '../errors.js';
import type { Plan, StoryRecord, StoryStatus, UsageEntry } from '../model.js';
import { UsageEntrySchema } from '../record-schema.js';

/** Coder rounds of one landing, at most. */
export const MAX_LAND_ROUNDS = 3;

/** The state file holding every landing of an epic. */
export const LAND_FILE = 'land.json';

/** A story that keeps the epic from landing, and where it stands. */
interface StoryStanding {
  readonly id: string;
  readonly status: StoryStatus;
}

/**
 * The stories of the plan that are not done, in plan order. Done is what a run
 * counts as done: merged on the epic branch, or recorded done (already in
 * place, skipped) for the plan entry as it is.
 */
export function unfinishedStories(
  plan: Plan,
  records: ReadonlyMap<string, StoryRecord>,
  merged: ReadonlyMap<string, string>,
): StoryStanding[] {
  const out: StoryStanding[] = [];
  for (const story of plan.stories) {
    if (merged.has(story.id)) continue;
    const r = records.get(story.id);
    if (r?.status === 'done' && r.planHash === plan.hashes[story.id]) continue;
    // Recorded done for another plan entry, or merged by a record the branch does not confirm.
    out.push({
      id: story.id,
      status: r === undefined || r.status === 'done' ? 'planned' : r.status,
    });
  }
  return out;
}

const OPEN = /^<{7}(?:\s|$)/;
const BASE = /^\|{7}(?:\s|$)/;
const SPLIT = /^={7}\s*$/;
const CLOSE = /^>{7}(?:\s|$)/;

/**
 * Line numbers (1 first) of the conflict markers in a text: `<<<<<<<`,
 * `|||||||` and `>>>>>>>` lines anywhere, `=======` between an opening and a
 * closing one (alone it is a heading underline, not a marker).
 */
export function conflictMarkerLines(text: string): number[] {
  const lines = text.split(/\r?\n/);
  const found: number[] = [];
  let open = false;
  lines.forEach((line, i) => {
    if (OPEN.test(line)) {
      open = true;
      found.push(i + 1);
    } else if (CLOSE.test(line)) {
      open = false;
      found.push(i + 1);
    } else if (BASE.test(line) || (open && SPLIT.test(line))) {
      found.push(i + 1);
    }
  });
  return found;
}

/**
 * The parts of a text around its conflict markers (`context` lines each side),
 * numbered, for a prompt; at most `maxChars`, then marked as cut.
 */
export function conflictExcerpt(text: string, context = 3, maxChars = 4000): string {
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const marks = conflictMarkerLines(text);
  if (marks.length === 0) return '';
  const keep = new Set<number>();
  for (const m of marks) {
    for (let n = Math.max(1, m - context); n <= Math.min(lines.length, m + context); n++) {
      keep.add(n);
    }
  }
  const out: string[] = [];
  let last = 0;
  for (const n of [...keep].sort((a, b) => a - b)) {
    if (last !== 0 && n > last + 1) out.push('…');
    out.push(`${String(n).padStart(4)}| ${lines[n - 1] ?? ''}`);
    last = n;
  }
  const joined = out.join('\n');
  return joined.length <= maxChars
    ? joined
    : `${joined.slice(0, maxChars)}\n[… ${joined.length - maxChars} more characters cut]`;
}

export type LandOutcome = 'running' | 'landed' | 'not-landed';

/** One landing (`land-<n>`), as `land.json` keeps it. */
export interface LandRecord {
  readonly job: string;
  /** The branch brought into the epic and that the epic landed in. */
  readonly into: string;
  readonly epicBranch: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly outcome: LandOutcome;
  readonly epicHeadBefore: string;
  readonly intoHeadBefore: string;
  /** The merge of `into` on the epic branch (when it moved). */
  readonly epicHeadAfter?: string;
  /** The merge of the epic on `into` (when it landed). */
  readonly intoHeadAfter?: string;
  /** Paths the merge left in conflict. */
  readonly conflicts: readonly string[];
  /** Gates that failed on the merged tree, new against the epic head. */
  readonly failingGates: readonly string[];
  /** Coder rounds that ran (0: the merge was clean and green). */
  readonly rounds: number;
  /** Executors that held the coder role, in order. */
  readonly executors: readonly string[];
  readonly usage: readonly UsageEntry[];
  readonly notes: readonly string[];
  readonly reason?: string;
  readonly nextStep?: string;
}

/** A landing asked for while another ran (GitHub: a push to the default branch): started after it. */
export interface PendingLand {
  readonly into: string;
  readonly intoHead: string;
  readonly since: string;
}

export interface LandLog {
  readonly version: 1;
  readonly lands: readonly LandRecord[];
  readonly pending?: PendingLand;
}

const LandRecordSchema = z.object({
  job: z.string(),
  into: z.string(),
  epicBranch: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().exactOptional(),
  outcome: z.enum(['running', 'landed', 'not-landed']),
  epicHeadBefore: z.string(),
  intoHeadBefore: z.string(),
  epicHeadAfter: z.string().exactOptional(),
  intoHeadAfter: z.string().exactOptional(),
  conflicts: z.array(z.string()),
  failingGates: z.array(z.string()),
  rounds: z.number().int().nonnegative(),
  executors: z.array(z.string()),
  usage: z.array(UsageEntrySchema),
  notes: z.array(z.string()),
  reason: z.string().exactOptional(),
  nextStep: z.string().exactOptional(),
});

const LandLogSchema = z.object({
  version: z.literal(1),
  lands: z.array(LandRecordSchema),
  pending: z.object({ into: z.string(), intoHead: z.string(), since: z.string() }).exactOptional(),
});

/** Compile-time check that what the schema accepts is a LandLog. */
type _LandLogMatches = z.output<typeof LandLogSchema> extends LandLog ? true : never;
const LAND_LOG_MATCHES: _LandLogMatches = true;
void LAND_LOG_MATCHES;

/** The landings read back (`null`: none yet); a typed error naming `where` when unreadable. */
export function readLandLog(json: unknown, where: string): LandLog {
  if (json === null) return { version: 1, lands: [] };
  const parsed = LandLogSchema.safeParse(json);
  if (!parsed.success) {
    throw new EpicflowError('state', `unreadable landing record: ${where}`, {
      details: [
        ...parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
        'delete the file to start the landing history over',
      ],
    });
  }
  return parsed.data;
}

/** The id of the next landing: `land-1`, `land-2`, … */
export function nextLandJob(log: LandLog): string {
  return `land-${log.lands.length + 1}`;
}

/** The log with `record` in place of the landing of the same job (or added). */
export function withLand(log: LandLog, record: LandRecord): LandLog {
  const rest = log.lands.filter((l) => l.job !== record.job);
  return { ...log, version: 1, lands: [...rest, record] };
}

/** What to do after a landing failed: resolve by hand on the epic branch, then land again. */
export function landNextStep(input: {
  readonly epicBranch: string;
  readonly into: string;
  readonly conflicts: readonly string[];
  readonly failingGates: readonly string[];
}): string {
  const rerun = 'then rerun `epicflow land`';
  if (input.conflicts.length > 0) {
    return `resolve ${input.conflicts.join(', ')} on ${input.epicBranch} yourself (merge ${input.into} into it), ${rerun}`;
  }
  if (input.failingGates.length > 0) {
    return `merge ${input.into} into ${input.epicBranch} yourself and make ${input.failingGates.map((g) => `\`${g}\``).join(', ')} pass, ${rerun}`;
  }
  return 'rerun `epicflow land`';
}
