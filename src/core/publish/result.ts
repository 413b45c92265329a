/**
 * A work job's result, as the publish job receives it: a small record (this schema) and the
 * story's commits as a git bundle, uploaded together as one artifact. The work job ran the
 * agent; the publish job holds the write credential. What the record says about quality
 * (gate runs, the judge's verdict, usage) was measured by epicflow's own process in the
 * work job and is taken as it is; what it says about commits is checked against the objects.
 */
import { z } from 'zod';
import { EpicflowError } from '../errors.js';
import { StoryRecordSchema } from '../record-schema.js';
import type { StoryRecord } from '../model.js';

/** The artifact's two files. */
export const RESULT_FILES = { record: 'result.json', bundle: 'result.bundle' } as const;

/** The refs a result bundle holds, and no others: the story commit and the merge the gates ran on. */
export const RESULT_REFS = {
  story: 'refs/epicflow-result/story',
  gated: 'refs/epicflow-result/gated',
} as const;

/** The largest bundle the publish side reads unless told otherwise (a story's commits, not a repository). */
export const DEFAULT_MAX_BUNDLE_BYTES = 100 * 1024 * 1024;

/** The largest result record read: a story's record and its gate runs, without their output. */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/**
 * The most commits one result may bring to the epic branch: each is read and scanned on its
 * own, and a story's work is tens of commits, not thousands.
 */
export const MAX_RESULT_COMMITS = 2000;

/** What is wrong with a result, for code to branch on (the message says it for people). */
export type RefusalReason =
  /** The artifact, its record or its bundle is not there. */
  | 'missing'
  /** The record or bundle is larger than its limit, or it brings more than `MAX_RESULT_COMMITS` commits. */
  | 'too-large'
  /** The record is not a result record (the field is named), or the bundle is not a bundle. */
  | 'malformed'
  /** The bundle holds refs other than the result's own. */
  | 'refs'
  /** The record names a commit the bundle does not hold. */
  | 'missing-objects'
  /** The story commit does not descend from the epic base the record names. */
  | 'not-descended'
  /** A changed path outside the story's perimeter, or one never merged. */
  | 'perimeter'
  /** An existing test changed without the plan's leave (or a skip marker added). */
  | 'existing-tests'
  /** A credential in the story's commits. */
  | 'secret';

/** A result the publish side refuses: nothing was merged or pushed, no ref moved. */
export class ResultRefusal extends EpicflowError {
  readonly reason: RefusalReason;

  constructor(reason: RefusalReason, message: string, details: readonly string[] = []) {
    super('result', message, { details });
    this.reason = reason;
  }
}

export function isResultRefusal(e: unknown, reason?: RefusalReason): e is ResultRefusal {
  return e instanceof ResultRefusal && (reason === undefined || e.reason === reason);
}

const Sha = z
  .string()
  .regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/, 'expected a full commit id (40 or 64 hex digits)');

/** One gate (or setup) run as the work job measured it. */
const GateRunSchema = z.strictObject({
  command: z.string(),
  ok: z.boolean(),
  timedOut: z.boolean(),
  /** The tree it ran in: the story's commit or the merged epic tree. */
  where: z.enum(['story', 'epic']),
});

export const RESULT_VERSION = 1;

const ResultRecordSchema = z.strictObject({
  version: z.literal(RESULT_VERSION),
  epic: z.string().min(1),
  story: z.string().min(1),
  attempt: z.number().int().positive(),
  /** The epic head the story started from (or last caught up with): its commits' base. */
  base: Sha,
  /** The epic head the work job merged the story into and gated, at its end. */
  epicHead: Sha,
  /** The commit every check judged: what is merged, by sha. */
  storyCommit: Sha,
  /** The merge of `storyCommit` into `epicHead` the gates ran on; null when none ran there. */
  gated: Sha.nullable(),
  gates: z.array(GateRunSchema),
  /** The story's record as the work job ended it: status, reason, verdict, usage, notes. */
  record: StoryRecordSchema,
  /** The roster as the work job left it (exclusions, rate limits), merged into the shared one. */
  roster: z.unknown().optional(),
});

export interface ResultRecord {
  readonly version: typeof RESULT_VERSION;
  readonly epic: string;
  readonly story: string;
  readonly attempt: number;
  readonly base: string;
  readonly epicHead: string;
  readonly storyCommit: string;
  readonly gated: string | null;
  readonly gates: readonly z.output<typeof GateRunSchema>[];
  readonly record: StoryRecord;
  readonly roster?: unknown;
}

/** Compile-time check that what the schema accepts is a ResultRecord. */
type _ResultMatches = z.output<typeof ResultRecordSchema> extends ResultRecord ? true : never;
const RESULT_SCHEMA_MATCHES: _ResultMatches = true;
void RESULT_SCHEMA_MATCHES;

/** The record file's text, as the work side writes it. */
export function formatResultRecord(result: ResultRecord): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}

/** A result record's JSON; text that is not JSON is refused as malformed. */
export function parseRecordJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new ResultRefusal('malformed', `the result record ${file} is not JSON`, [
      (e as Error).message,
    ]);
  }
}

/**
 * Reads a result record for the publish job of `expected` (the epic, story and attempt it
 * was started for): any field that is not as the schema says, or names another story,
 * is refused with the field's name.
 */
export function parseResultRecord(
  text: string,
  expected: { readonly epic: string; readonly story: string; readonly attempt: number },
): ResultRecord {
  const file = RESULT_FILES.record;
  const json = parseRecordJson(text, file);
  const parsed = ResultRecordSchema.safeParse(json);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ResultRefusal(
      'malformed',
      `the result record ${file} is not a version ${RESULT_VERSION} result: ${fields[0] ?? ''}`,
      fields,
    );
  }
  const result: ResultRecord = parsed.data;
  const mismatch = (field: string, got: unknown, want: unknown): never => {
    throw new ResultRefusal(
      'malformed',
      `the result record ${file} field ${field} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`,
    );
  };
  if (result.epic !== expected.epic) mismatch('epic', result.epic, expected.epic);
  if (result.story !== expected.story) mismatch('story', result.story, expected.story);
  if (result.attempt !== expected.attempt) mismatch('attempt', result.attempt, expected.attempt);
  const { record } = result;
  if (record.epic !== result.epic) mismatch('record.epic', record.epic, result.epic);
  if (record.story !== result.story) mismatch('record.story', record.story, result.story);
  if (record.attempt !== result.attempt) {
    mismatch('record.attempt', record.attempt, result.attempt);
  }
  if (record.storyCommit !== undefined && record.storyCommit !== result.storyCommit) {
    mismatch('record.storyCommit', record.storyCommit, result.storyCommit);
  }
  return result;
}
