/**
 * Review lenses (docs/config.md, `review`): each reviewer turn reads a story's change
 * through one lens, a name and an instruction. Without `review.lenses` these four run.
 */

export interface ReviewLens {
  /** Kebab-case, unique in the list: `correctness`, `tests`, … */
  readonly name: string;
  /** What the reviewer looks for through this lens. */
  readonly instruction: string;
}

export const DEFAULT_LENSES: readonly ReviewLens[] = [
  {
    name: 'correctness',
    instruction:
      'Does the change do what the story asks, for every input it can get? Look for wrong results, unhandled errors and edge cases, and broken callers.',
  },
  {
    name: 'tests',
    instruction:
      'Would the tests catch a regression of this change? Look for behaviour without a test, tests that cannot fail, and tests weakened or skipped.',
  },
  {
    name: 'security',
    instruction:
      'Could the change be abused? Look for untrusted input reaching a shell, a query, a path or HTML unchecked, secrets in code or logs, and missing permission checks.',
  },
  {
    name: 'house-style',
    instruction:
      'Does the change read like the code around it and follow the house rules? Look for names, structure and error handling that differ from the rest of the repository.',
  },
];
