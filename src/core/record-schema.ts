/**
 * The zod schema of a durable story record (`StoryRecord` in model.ts), shared
 * by every state store (local files, the GitHub state branch) so a record read
 * back from any of them is checked the same way.
 */
import { z } from 'zod';
import { judgeVerdictSchema, verifierAnswerSchema } from './judge/verdict.js';
import { reviewAnswerSchema } from './review/prompt.js';
import { OUTGROWN, STORY_STATUSES, type Outgrown, type StoryRecord } from './model.js';

const Tokens = z.object({
  input: z.number().int().nonnegative(),
  cachedInput: z.number().int().nonnegative(),
  cacheWrite: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
});

/** A judge's or verifier's answer kept with its fingerprint (`HelperAnswer`). */
function helperAnswer<T extends z.ZodType>(answer: T) {
  return z.object({ fingerprint: z.string(), executor: z.string(), answer });
}

/** One usage entry (`UsageEntry`), as every durable record holds it. */
export const UsageEntrySchema = z.object({
  executor: z.string(),
  model: z.string(),
  tokens: Tokens,
  measured: z.boolean(),
  costUsd: z.number().nonnegative().nullable(),
  costSource: z.enum(['cli', 'price-table', 'none']),
});

export const StoryRecordSchema = z.object({
  version: z.literal(1),
  epic: z.string(),
  story: z.string(),
  planHash: z.string(),
  status: z.enum(STORY_STATUSES as [StoryRecord['status'], ...StoryRecord['status'][]]),
  branch: z.string(),
  attempt: z.number().int().positive(),
  executors: z.array(z.string()),
  usage: z.array(UsageEntrySchema),
  reason: z.string().exactOptional(),
  outgrown: z.enum(OUTGROWN as [Outgrown, ...Outgrown[]]).exactOptional(),
  notes: z.array(z.string()),
  mergeCommit: z.string().exactOptional(),
  storyCommit: z.string().exactOptional(),
  progress: z
    .object({ commit: z.string(), passed: z.enum(['none', 'checks', 'judge']) })
    .exactOptional(),
  startedAt: z.string().exactOptional(),
  finishedAt: z.string().exactOptional(),
  timings: z.record(z.string(), z.number()),
  restart: z.literal('fresh').exactOptional(),
  revision: z
    .object({
      round: z.number().int().positive(),
      supersedes: z.string().exactOptional(),
      comments: z.array(
        z.object({
          key: z.string(),
          path: z.string().exactOptional(),
          line: z.number().int().nullable().exactOptional(),
          removed: z.literal(true).exactOptional(),
          author: z.string(),
          body: z.string(),
        }),
      ),
    })
    .exactOptional(),
  judged: helperAnswer(judgeVerdictSchema).exactOptional(),
  verified: helperAnswer(verifierAnswerSchema).exactOptional(),
  reviewed: z.record(z.string(), helperAnswer(reviewAnswerSchema)).exactOptional(),
  inherited: z.array(z.string()).exactOptional(),
  inheritedLines: z
    .array(z.object({ command: z.string(), lines: z.array(z.string()) }))
    .exactOptional(),
  tasks: z
    .array(
      z.object({
        title: z.string(),
        outcome: z.string(),
        paths: z.array(z.string()),
        satisfies: z.array(z.number().int().positive()),
        done: z.boolean(),
        commit: z.string().exactOptional(),
        findings: z.string().exactOptional(),
      }),
    )
    .exactOptional(),
  deferred: z.array(z.string()).exactOptional(),
  deferredRound: z
    .object({ findings: z.array(z.string()), supersedes: z.string().exactOptional() })
    .exactOptional(),
  retroNote: z.string().exactOptional(),
  evaluations: z
    .array(
      z.object({
        kind: z.enum(['review', 'judge']),
        round: z.number().int().positive(),
        attempt: z.number().int().positive(),
        commit: z.string(),
        cleared: z.boolean(),
        findings: z.array(z.string()),
        scores: z.record(z.string(), z.number()),
        executors: z.array(z.string()),
        outcome: z.enum(['fixing', 'open', 'passed', 'failed']),
      }),
    )
    .exactOptional(),
  issueRequests: z
    .strictObject({
      addLabels: z.array(z.string().min(1).max(50)).max(100),
      removeLabels: z.array(z.string().min(1).max(50)).max(100),
      assignees: z.array(z.string().min(1).max(50)).max(100),
    })
    .exactOptional(),
});

/** Compile-time check that what the schema accepts is a StoryRecord. */
type _RecordMatches = z.output<typeof StoryRecordSchema> extends StoryRecord ? true : never;
const RECORD_SCHEMA_MATCHES: _RecordMatches = true;
void RECORD_SCHEMA_MATCHES;
