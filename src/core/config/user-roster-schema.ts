/**
 * Reads a user-level roster file (`executors.yml`): a mapping with one key, `executors`,
 * listing entries exactly as a repository's config does. It is checked on its own, so a
 * problem in it names this file and its own entry numbers.
 */
import { z } from 'zod';
import YAML from 'yaml';
import { EpicflowError } from '../errors.js';
import { checkExecutorList, isRecord } from './cross-check.js';
import { formatIssues, type KnownKeys } from './issues.js';
import { ExecutorSchema } from './schema.js';

const UserRoster = z
  .strictObject(
    {
      executors: z.array(ExecutorSchema, { error: 'expected a list of executors' }).default([]),
    },
    { error: (i) => (i.code === 'invalid_type' ? 'expected a mapping with executors' : undefined) },
  )
  .superRefine(
    (value, ctx) => {
      if (isRecord(value) && Array.isArray(value.executors)) {
        checkExecutorList(value.executors, ctx);
      }
    },
    { when: () => true },
  );

/**
 * The entries of a user roster as written (checked, defaults not applied: the merged config
 * is validated once more as a whole). An empty file lists none.
 */
export function parseUserRoster(text: string, file: string): Record<string, unknown>[] {
  const document = YAML.parseDocument(text);
  if (document.errors.length > 0) {
    throw new EpicflowError('config', `invalid executors file ${file}`, {
      details: document.errors.map((e) => e.message.split('\n')[0] ?? e.message),
    });
  }
  const value: unknown = document.toJS() ?? {};
  const knownKeys: KnownKeys = new WeakMap();
  const result = UserRoster.safeParse(value, {
    reportInput: true,
    error: (issue) => {
      if (
        issue.code === 'unrecognized_keys' &&
        issue.inst instanceof z.ZodObject &&
        isRecord(issue.input)
      ) {
        knownKeys.set(issue.input, Object.keys(issue.inst.shape));
      }
      return undefined;
    },
  });
  if (!result.success) {
    throw new EpicflowError('config', `invalid executors file ${file}`, {
      details: formatIssues(result.error.issues, knownKeys).map((p) => p.line),
    });
  }
  return isRecord(value) && Array.isArray(value.executors) ? value.executors.filter(isRecord) : [];
}
