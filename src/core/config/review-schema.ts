/** The `review` block of the config: reviewers and their lenses (docs/config.md). */
import { z } from 'zod';
import { DEFAULT_LENSES } from '../review/lenses.js';
import { expecting, mapping, nonEmptyString, nonNegativeInt } from './schema-parts.js';

const REVIEW_ROLES = ['reviewer', 'judge'] as const;

export const ReviewSchema = mapping(
  {
    role: z
      .enum(REVIEW_ROLES, { error: `expected one of ${REVIEW_ROLES.join(', ')}` })
      .default('reviewer')
      .describe(
        "The executor role whose executors review: `reviewer`, or `judge` to let the judges review too. Each lens goes to one of them, away from the story's coders when another can serve.",
      ),
    rounds: nonNegativeInt()
      .default(2)
      .describe(
        "Coder rounds fed with the reviewers' findings. Findings still open after them go to the judge (the final verdict) and into the story's findings log.",
      ),
    lenses: z
      .array(
        mapping(
          {
            name: z
              .string(expecting('a kebab-case lens name like "tests"'))
              .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, expecting('a kebab-case lens name like "tests"'))
              .describe("The lens's name, in kebab-case: it prefixes its findings."),
            instruction: nonEmptyString('an instruction for the reviewer').describe(
              'What the reviewer looks for through this lens.',
            ),
          },
          'a mapping with name and instruction',
        ),
        expecting('a list of lenses'),
      )
      .min(1, expecting('at least one lens'))
      .default(DEFAULT_LENSES.map((l) => ({ ...l })))
      .describe(
        'The lenses, one reviewer turn each per round: by default correctness, tests, security and house-style.',
      ),
  },
  'a mapping with role, rounds and lenses',
)
  .exactOptional()
  .describe(
    "Optional review rounds after the gates pass: model reviewers read the story's diff through named lenses, and their findings go back to the coder before the judge.",
  );
