/**
 * Turns zod issues into one line per problem, for people:
 * `<field.path>: <what was expected>, got <what>`.
 */
import type { z } from 'zod';
import { nearMiss } from '../near-miss.js';

/** Known keys of each object that had unknown keys, keyed by that object (the input). */
export type KnownKeys = WeakMap<object, readonly string[]>;

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(String(part)))
      out += out === '' ? String(part) : `.${String(part)}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out === '' ? '(top level)' : out;
}

/** What the user wrote, short: strings quoted, containers named. */
function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  }
  return String(value);
}

/** One problem: where it is, and its line for people. */
export interface Problem {
  readonly path: readonly PropertyKey[];
  readonly line: string;
}

/**
 * One line per problem. Custom issues carry their whole text (they phrase
 * "got" themselves, e.g. never echoing a secret); every other message is the
 * "expected …" phrase set on the schema, completed with what was found.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], knownKeys: KnownKeys): Problem[] {
  const lines: Problem[] = [];
  const push = (path: readonly PropertyKey[], text: string): void => {
    lines.push({ path, line: `${formatPath(path)}: ${text}` });
  };
  for (const issue of issues) {
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known =
          typeof issue.input === 'object' && issue.input !== null
            ? (knownKeys.get(issue.input) ?? [])
            : [];
        for (const key of issue.keys) {
          const suggestion = nearMiss(key, known);
          const hint =
            suggestion !== undefined
              ? `did you mean "${suggestion}"?`
              : `expected one of: ${known.join(', ')}`;
          push([...issue.path, key], `unknown key (${hint})`);
        }
        break;
      }
      case 'invalid_key': {
        const inner = issue.issues[0]?.message ?? 'expected a valid key';
        push(issue.path, `${inner}, got key ${describeValue(issue.input)}`);
        break;
      }
      case 'custom':
        push(issue.path, issue.message);
        break;
      default:
        push(issue.path, `${issue.message}, got ${describeValue(issue.input)}`);
    }
  }
  return lines;
}
