/**
 * `describeNeeding(['root'], 'name', body)`: a `describe` whose tests need a mode of the
 * machine (test/support/modes.js), for a file where only some tests do (a file whose every
 * test does says so once with `@needs` in its first comment instead). Where the machine lacks
 * one, the block is a single `todo` test titled with the modes and why they are missing: jest
 * counts it, and the modes reporter lists it at the end of the run (a failure with CI=true).
 */
import { describe, it } from '@jest/globals';
import { detectModes, notRunTitle, type Mode } from './modes.js';

export function describeNeeding(modes: readonly Mode[], name: string, body: () => void): void {
  const { missing } = detectModes();
  if (modes.every((m) => !missing.has(m))) describe(name, body);
  else describe(name, () => it.todo(notRunTitle(modes, missing)));
}
