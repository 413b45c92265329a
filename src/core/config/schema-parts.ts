/** The pieces the config's schemas are made of: each says what it expected. */
import { z } from 'zod';
import { DURATION_PATTERN, durationToMs } from './duration.js';

/** The error param of a leaf schema: every issue it raises says what was expected. */
export function expecting(what: string): { error: string } {
  return { error: `expected ${what}` };
}

/** A strict mapping: unknown keys are errors, a non-mapping says what was expected. */
export function mapping<Shape extends z.core.$ZodLooseShape>(shape: Shape, what: string) {
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'invalid_type' ? `expected ${what}` : undefined),
  });
}

export const nonEmptyString = (what: string) => z.string(expecting(what)).min(1, expecting(what));
export const positiveInt = () =>
  z.int(expecting('a positive integer')).positive(expecting('a positive integer'));
export const nonNegativeInt = () =>
  z.int(expecting('an integer of 0 or more')).nonnegative(expecting('an integer of 0 or more'));

const DURATION_WHAT = 'a duration like 90s, 20m or 2h';

/** A number of seconds or `1h30m`-style text, parsed into milliseconds. */
export const duration = () =>
  z
    .union(
      [
        z.number(expecting(DURATION_WHAT)).positive(expecting(DURATION_WHAT)),
        z.string(expecting(DURATION_WHAT)).regex(DURATION_PATTERN, expecting(DURATION_WHAT)),
      ],
      expecting(DURATION_WHAT),
    )
    .transform((value, ctx) => {
      const ms = durationToMs(value);
      if (ms === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `expected a positive duration of at most 24 days, got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      return ms;
    });

export const price = () =>
  z
    .number(expecting('a price of 0 or more (US dollars per million tokens)'))
    .nonnegative(expecting('a price of 0 or more (US dollars per million tokens)'));
