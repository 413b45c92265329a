import type { z } from 'zod';
import { nearMiss } from '../near-miss.js';

/**
 * Turns zod issues into sentences for people. The plan's own wording is used
 * ("a list", "a mapping") rather than JavaScript's, because the reader wrote YAML.
 */

/** How a YAML value reads to its author: `a string`, `a list`, `null`. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'a mapping';
    default:
      return typeof value;
  }
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'a string',
  array: 'a list',
  boolean: 'true or false',
  number: 'a number',
  object: 'a mapping',
};

/** Reads the value a zod issue path points at inside `root`. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** `field "owns"`, or `field "owns" item 2` for an element (1-based, as people count). */
function fieldName(path: readonly PropertyKey[]): string {
  const [field, ...rest] = path;
  const items = rest.map((k) => (typeof k === 'number' ? ` item ${k + 1}` : `.${String(k)}`));
  return `field ${JSON.stringify(String(field))}${items.join('')}`;
}

interface IssueText {
  /** The top-level field the issue is about (or an unknown field's name). */
  readonly field?: string;
  readonly text: string;
}

/** One or more sentences per issue (an unrecognized-keys issue names each key). */
export function describeIssue(
  issue: z.core.$ZodIssue,
  root: unknown,
  knownFields: readonly string[],
): IssueText[] {
  const path = issue.path;
  const field = path[0] === undefined ? undefined : String(path[0]);
  const at = (text: string): IssueText => (field === undefined ? { text } : { field, text });
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        field: key,
        text: `unknown field ${JSON.stringify(key)}${suggestion(key, knownFields)}`,
      }));
    case 'invalid_type': {
      const value = valueAt(root, path);
      if (value === undefined && path.length === 1) {
        return [at(`missing required field ${JSON.stringify(field)}`)];
      }
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      return [at(`${fieldName(path)} must be ${expected}, got ${describeValue(value)}`)];
    }
    case 'too_small':
      if (issue.origin === 'array') return [at(`${fieldName(path)} is empty`)];
      return [at(`${fieldName(path)}: ${issue.message}`)];
    case 'custom':
      return [at(`${fieldName(path)} ${issue.message}`)];
    default:
      return [at(path.length > 0 ? `${fieldName(path)}: ${issue.message}` : issue.message)];
  }
}

/**
 * What other tools call a story's fields (GitHub Actions' `needs`, a task list's `files`):
 * suggested before any near spelling (`needs` is two letters from `reads`).
 */
const FIELD_ALIASES: Readonly<Record<string, string>> = {
  needs: 'dependsOn',
  depends: 'dependsOn',
  dependencies: 'dependsOn',
  deps: 'dependsOn',
  requires: 'dependsOn',
  after: 'dependsOn',
  blockedBy: 'dependsOn',
  files: 'owns',
  paths: 'owns',
  writes: 'owns',
  scope: 'owns',
  name: 'title',
  body: 'description',
  details: 'description',
  prompt: 'description',
  criteria: 'acceptance',
  acceptanceCriteria: 'acceptance',
  doneWhen: 'acceptance',
  agent: 'executor',
  context: 'reads',
};

/** ` (did you mean "dependsOn"?)` when an unknown field is a near miss of a known one. */
function suggestion(key: string, known: readonly string[]): string {
  const name = nearMiss(key, known, FIELD_ALIASES);
  return name === undefined ? '' : ` (did you mean ${JSON.stringify(name)}?)`;
}
