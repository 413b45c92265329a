import { z } from 'zod';

/**
 * The story entry as written in a plan (docs/plan-format.md), before path normalisation.
 * Strict: an unknown field (a typo such as `dependOn`) is an error, never ignored.
 * Rules with their own violation codes (id format, empty `owns`, paths) are
 * checked outside the schema so that they get those codes.
 */
const oneLine = z
  .string()
  .refine((s) => s.trim().length > 0, 'must not be empty')
  .refine((s) => !/[\r\n]/.test(s.trim()), 'must be one line');
const nonEmpty = z.string().refine((s) => s.trim().length > 0, 'must not be empty');
const strings = z.array(z.string());

export const StoryEntryShape = {
  id: z.string(),
  title: oneLine,
  description: nonEmpty,
  owns: strings,
  reads: strings.optional(),
  readFirst: strings.optional(),
  dependsOn: strings.optional(),
  provides: strings.optional(),
  acceptance: strings.optional(),
  executor: nonEmpty.optional(),
  testsChange: z.boolean().optional(),
  tasks: z.boolean().optional(),
} as const;

export type StoryField = keyof typeof StoryEntryShape;
export const STORY_FIELDS = Object.keys(StoryEntryShape) as StoryField[];

export const StoryEntry = z.strictObject(StoryEntryShape);
export type StoryEntry = z.infer<typeof StoryEntry>;

export const PlanDocument = z.strictObject({ stories: z.array(z.unknown()) });
