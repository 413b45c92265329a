/**
 * The configuration's checks that span fields (the schema in schema.ts checks each
 * field alone): unique executor ids, a coder among the executors, a judge that names an
 * executor with role judge, a `command` only with harness command, the variables
 * an executor's env may not set, and no epic label among those a coder may ask for.
 */
import type { z } from 'zod';
import { envValueProblem, isGithubTokenName } from './env.js';
import { HARNESSES } from './types.js';

type Ctx = z.core.$RefinementCtx;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks that span fields. They run even when fields are invalid, so that all
 * problems are reported at once; hence they read the value defensively.
 */
export function crossCheck(config: unknown, ctx: Ctx): void {
  if (!isRecord(config)) return;
  const executors = Array.isArray(config.executors) ? config.executors : [];
  checkExecutorList(executors, ctx);
  const rolesOf = (executor: Record<string, unknown>): unknown[] =>
    Array.isArray(executor.roles) ? executor.roles : ['coder'];
  const valid = executors.filter(isRecord);
  const enabled = valid.filter((e) => e.disabled !== true);
  if (valid.length > 0 && !enabled.some((e) => rolesOf(e).includes('coder'))) {
    ctx.addIssue({
      code: 'custom',
      path: ['executors'],
      message: valid.some((e) => rolesOf(e).includes('coder'))
        ? 'expected at least one executor with role coder that is not disabled, got none'
        : 'expected at least one executor with role coder, got none',
    });
  }
  if (isRecord(config.judge) && typeof config.judge.executor === 'string') {
    const id = config.judge.executor;
    const judge = valid.find((e) => e.id === id);
    const why =
      judge === undefined
        ? 'no executor has this id'
        : judge.disabled === true
          ? 'it is disabled'
          : rolesOf(judge).includes('judge')
            ? undefined
            : `its roles are ${rolesOf(judge).map(String).join(', ')}`;
    if (why !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['judge', 'executor'],
        message: `expected the id of an executor with role judge, got "${id}" (${why})`,
      });
    }
  }
  if (isRecord(config.review)) checkReview(config.review, enabled, rolesOf, ctx);
  checkIssueTools(config, ctx);
}

/**
 * A coder may never be let put the epic label on its sub-issue: an issue with it is an epic,
 * and epicflow would start running it.
 */
function checkIssueTools(config: Record<string, unknown>, ctx: Ctx): void {
  if (!isRecord(config.issueTools) || !Array.isArray(config.issueTools.labels)) return;
  const epic =
    isRecord(config.labels) && typeof config.labels.epic === 'string' ? config.labels.epic : 'epic';
  config.issueTools.labels.forEach((label, i) => {
    if (typeof label === 'string' && label.toLowerCase() === epic.toLowerCase()) {
      ctx.addIssue({
        code: 'custom',
        path: ['issueTools', 'labels', i],
        message: `expected a label other than the epic label "${epic}" (an issue with it becomes an epic), got "${label}"`,
      });
    }
  });
}

/**
 * The checks of an executor list on its own (each entry, unique ids): the config's
 * `executors` and a user-level roster file alike.
 */
export function checkExecutorList(executors: readonly unknown[], ctx: Ctx): void {
  const seen = new Map<string, number>();
  executors.forEach((executor: unknown, index) => {
    if (!isRecord(executor)) return;
    checkExecutor(executor, ['executors', index], ctx);
    if (typeof executor.id !== 'string') return;
    const first = seen.get(executor.id);
    if (first !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['executors', index, 'id'],
        message: `expected a unique id, got "${executor.id}" again (also executors[${first}])`,
      });
    } else seen.set(executor.id, index);
  });
}

/** A review needs an executor of its role, and lens names that tell findings apart. */
function checkReview(
  review: Record<string, unknown>,
  valid: readonly Record<string, unknown>[],
  rolesOf: (e: Record<string, unknown>) => unknown[],
  ctx: Ctx,
): void {
  const role = typeof review.role === 'string' ? review.role : 'reviewer';
  if (valid.length > 0 && !valid.some((e) => rolesOf(e).includes(role))) {
    ctx.addIssue({
      code: 'custom',
      path: ['review', 'role'],
      message: `expected an executor with role ${role} to review, got none (add it to an executor's roles)`,
    });
  }
  if (!Array.isArray(review.lenses)) return;
  const seen = new Set<string>();
  review.lenses.forEach((lens: unknown, index) => {
    if (!isRecord(lens) || typeof lens.name !== 'string') return;
    if (seen.has(lens.name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['review', 'lenses', index, 'name'],
        message: `expected a unique lens name, got "${lens.name}" again`,
      });
    }
    seen.add(lens.name);
  });
}

function checkExecutor(executor: Record<string, unknown>, at: (string | number)[], ctx: Ctx): void {
  const harness = executor.harness;
  if (harness === 'command' && executor.command === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [...at, 'command'],
      message: 'expected an argv list like ["my-agent", "--flag"] for harness command, got nothing',
    });
  }
  const known = (HARNESSES as readonly unknown[]).includes(harness);
  if (known && harness !== 'command' && executor.command !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [...at, 'command'],
      message: `not allowed with harness ${String(harness)} (only with harness command)`,
    });
  }
  if (!isRecord(executor.env)) return;
  for (const [name, value] of Object.entries(executor.env)) {
    const problem = isGithubTokenName(name)
      ? 'not allowed: executors never see a GitHub token'
      : /^EPICFLOW_/i.test(name)
        ? 'not allowed: epicflow sets EPICFLOW_* variables itself'
        : typeof value === 'string'
          ? envValueProblem(name, value)
          : undefined;
    if (problem !== undefined) {
      ctx.addIssue({ code: 'custom', path: [...at, 'env', name], message: problem });
    }
  }
}
