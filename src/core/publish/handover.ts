/**
 * What a planning or retro work job hands its publish job (the story's result is in
 * result.ts): one small record, `result.json` in the uploaded artifact. The work job ran the
 * executor with a token that can only read; the publish job, which holds the write
 * credential, takes from it only text it checks again before writing: a plan section it
 * parses with the validator of a hand-written plan, fixes of a schema it renders itself,
 * and a secret scan of every text before any of it reaches the issue.
 */
import { z } from 'zod';
import { retroFixSchema, type RetroFix } from '../retro/answer.js';
import { UsageEntrySchema } from '../record-schema.js';
import type { UsageEntry } from '../model.js';
import { parseRecordJson, ResultRefusal } from './result.js';
import { GITHUB_BODY_MAX } from '../report/markdown.js';

export const HANDOVER_VERSION = 1;

/** A text the publish side writes to GitHub: at most an issue body. */
const Text = z.string().max(GITHUB_BODY_MAX);
const Lines = z.array(z.string().max(4_000)).max(500);

const Costs = {
  version: z.literal(HANDOVER_VERSION),
  epic: z.string().min(1),
  attempt: z.number().int().positive(),
  usage: z.array(UsageEntrySchema).max(2_000),
  notes: Lines,
};

const PlanHandoverSchema = z.strictObject({
  ...Costs,
  job: z.literal('plan'),
  rounds: z.number().int().nonnegative(),
  executors: z.array(z.string().max(200)).max(100),
  outcome: z.discriminatedUnion('kind', [
    /** The plan section as the issue gets it (its block included); parsed again before it is written. */
    z.strictObject({ kind: z.literal('planned'), section: Text, notPlanned: Lines }),
    z.strictObject({ kind: z.literal('invalid'), problems: Lines }),
    z.strictObject({ kind: z.literal('failed'), reason: z.string().max(4_000) }),
  ]),
});

const RetroHandoverSchema = z.strictObject({
  ...Costs,
  job: z.literal('retro'),
  outcome: z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('proposed'),
      rounds: z.number().int().nonnegative(),
      fixes: z.array(retroFixSchema).max(200),
      leftOut: Lines,
    }),
    z.strictObject({ kind: z.literal('failed'), reason: z.string().max(4_000) }),
  ]),
});

const Sha = z
  .string()
  .regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/, 'expected a full commit id (40 or 64 hex digits)');
const Paths = z.array(z.string().max(4_096)).max(10_000);

const LandHandoverSchema = z.strictObject({
  ...Costs,
  job: z.literal('land'),
  /** The landing's job id (`land-<n>`). */
  land: z.string().regex(/^land-[1-9][0-9]*$/, 'expected land-<n>'),
  /** The epic head the landing merged into, and the branch head it brought in. */
  epicHead: Sha,
  branchHead: Sha,
  conflicts: Paths,
  failingGates: Lines,
  rounds: z.number().int().nonnegative(),
  executors: z.array(z.string().max(200)).max(100),
  outcome: z.discriminatedUnion('kind', [
    /** The landed merge (parents: `epicHead`, `branchHead`), in the artifact's bundle. */
    z.strictObject({ kind: z.literal('merged'), commit: Sha }),
    /** The epic branch already held the branch: nothing to push. */
    z.strictObject({ kind: z.literal('unchanged') }),
    z.strictObject({ kind: z.literal('failed'), reason: z.string().max(4_000) }),
  ]),
});

interface HandoverCosts {
  readonly version: typeof HANDOVER_VERSION;
  readonly epic: string;
  readonly attempt: number;
  readonly usage: readonly UsageEntry[];
  readonly notes: readonly string[];
}

export interface PlanHandover extends HandoverCosts {
  readonly job: 'plan';
  readonly rounds: number;
  readonly executors: readonly string[];
  readonly outcome:
    | { readonly kind: 'planned'; readonly section: string; readonly notPlanned: readonly string[] }
    | { readonly kind: 'invalid'; readonly problems: readonly string[] }
    | { readonly kind: 'failed'; readonly reason: string };
}

export interface RetroHandover extends HandoverCosts {
  readonly job: 'retro';
  readonly outcome:
    | {
        readonly kind: 'proposed';
        readonly rounds: number;
        readonly fixes: readonly RetroFix[];
        readonly leftOut: readonly string[];
      }
    | { readonly kind: 'failed'; readonly reason: string };
}

export interface LandHandover extends HandoverCosts {
  readonly job: 'land';
  readonly land: string;
  readonly epicHead: string;
  readonly branchHead: string;
  readonly conflicts: readonly string[];
  readonly failingGates: readonly string[];
  readonly rounds: number;
  readonly executors: readonly string[];
  readonly outcome:
    | { readonly kind: 'merged'; readonly commit: string }
    | { readonly kind: 'unchanged' }
    | { readonly kind: 'failed'; readonly reason: string };
}

export type Handover = PlanHandover | RetroHandover | LandHandover;

/** Compile-time checks that what the schemas accept are the types above. */
type _PlanMatches = z.output<typeof PlanHandoverSchema> extends PlanHandover ? true : never;
type _RetroMatches = z.output<typeof RetroHandoverSchema> extends RetroHandover ? true : never;
type _LandMatches = z.output<typeof LandHandoverSchema> extends LandHandover ? true : never;
const HANDOVER_SCHEMAS_MATCH: [_PlanMatches, _RetroMatches, _LandMatches] = [true, true, true];
void HANDOVER_SCHEMAS_MATCH;

/** The record file's text, as the work side writes it. */
export function formatHandover(handover: Handover): string {
  return `${JSON.stringify(handover, null, 2)}\n`;
}

/**
 * Reads the hand-over of the `job` attempt `attempt` of `epic`: any field not as the schema
 * says, or naming another job, epic or attempt, is refused with the field's name.
 */
export function parseHandover<J extends Handover['job']>(
  text: string,
  file: string,
  expected: { readonly job: J; readonly epic: string; readonly attempt: number },
): Extract<Handover, { job: J }> {
  const json = parseRecordJson(text, file);
  const schema = { plan: PlanHandoverSchema, retro: RetroHandoverSchema, land: LandHandoverSchema }[
    expected.job
  ];
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ResultRefusal(
      'malformed',
      `the result record ${file} is not a version ${HANDOVER_VERSION} ${expected.job} result: ${fields[0] ?? ''}`,
      fields,
    );
  }
  const handover = parsed.data as Handover;
  for (const field of ['epic', 'attempt'] as const) {
    if (handover[field] !== expected[field]) {
      throw new ResultRefusal(
        'malformed',
        `the result record ${file} field ${field} is ${JSON.stringify(handover[field])}, expected ${JSON.stringify(expected[field])}`,
      );
    }
  }
  return handover as Extract<Handover, { job: J }>;
}

/** Every text of a hand-over the publish side may write to GitHub, each with where it is. */
export function handoverTexts(handover: Handover): { where: string; text: string }[] {
  const notes = handover.notes.map((text, i) => ({ where: `note ${i + 1}`, text }));
  const { outcome } = handover;
  switch (outcome.kind) {
    case 'planned':
      return [
        { where: 'the plan section', text: outcome.section },
        ...outcome.notPlanned.map((text, i) => ({ where: `not planned ${i + 1}`, text })),
        ...notes,
      ];
    case 'invalid':
      return [
        ...outcome.problems.map((text, i) => ({ where: `problem ${i + 1}`, text })),
        ...notes,
      ];
    case 'failed':
      return [{ where: 'the reason', text: outcome.reason }, ...notes, ...landTexts(handover)];
    case 'merged':
    case 'unchanged':
      return [...notes, ...landTexts(handover)];
    case 'proposed':
      return [
        ...outcome.fixes.map((fix) => ({
          where: `the fix for ${fix.story}`,
          text: JSON.stringify(fix),
        })),
        ...outcome.leftOut.map((text, i) => ({ where: `left out ${i + 1}`, text })),
        ...notes,
      ];
  }
}

/** What a landing's record takes from its hand-over besides the notes: paths and gate names. */
function landTexts(handover: Handover): { where: string; text: string }[] {
  if (handover.job !== 'land') return [];
  return [
    ...handover.conflicts.map((text) => ({ where: 'a conflicting path', text })),
    ...handover.failingGates.map((text) => ({ where: 'a failing gate', text })),
  ];
}
