import { createHash } from 'node:crypto';
import { EpicflowError } from '../errors.js';
import type { Plan, Story } from '../model.js';
import type { Violation } from './types.js';

/**
 * Stable hash of a story's normalised entry (docs/plan-format.md: a changed entry restarts
 * the story). It is computed from the parsed value, never from YAML text, so
 * formatting, key order and written-out defaults (`reads: []`) do not change it.
 * `owns`, `reads` and `dependsOn` are sets, so their order does not count either;
 * `acceptance` and `provides` keep their order because people number them.
 */
export function storyHash(story: Story): string {
  const entry = {
    id: story.id,
    title: story.title,
    description: story.description,
    owns: sortedSet(story.owns),
    reads: sortedSet(story.reads),
    dependsOn: sortedSet(story.dependsOn),
    provides: [...story.provides],
    acceptance: [...story.acceptance],
    executor: story.executor ?? null,
    testsChange: story.testsChange,
    // Absent when unset, so a plan without it keeps its hashes.
    tasks: story.tasks,
    readFirst: story.readFirst === undefined ? undefined : [...story.readFirst],
  };
  return createHash('sha256').update(canonicalJson(entry)).digest('hex').slice(0, 16);
}

/** The same stories with the same entries (hashes), whatever their order: a plan read back as written. */
export function samePlanEntries(a: Plan, b: Plan): boolean {
  const sorted = (p: Plan): string =>
    JSON.stringify(Object.entries(p.hashes).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return sorted(a) === sorted(b);
}

/**
 * A plan is never written unless it reads back as the one validated: `back` is what
 * reading the written text gives. Returns the plan read back; throws `internal`, naming
 * `what` and the violations, otherwise.
 */
export function readBackAsWritten(
  back:
    | { readonly ok: true; readonly plan: Plan }
    | { readonly ok: false; readonly violations: readonly Violation[] },
  written: Plan,
  what: string,
): Plan {
  if (back.ok && samePlanEntries(back.plan, written)) return back.plan;
  throw new EpicflowError('internal', `${what} does not read back as validated`, {
    details: back.ok ? [] : back.violations.map((v) => `${v.code}: ${v.message}`),
  });
}

function sortedSet(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

/** JSON with object keys sorted at every level, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
