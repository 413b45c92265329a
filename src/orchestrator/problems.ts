/**
 * The comments that say why an epic does not go on, one per epic and kind, edited in
 * place: an invalid configuration or a failed decision (the `error` marker), an
 * invalid plan (`violations`); each struck through or marked fixed once the epic goes
 * again.
 */
import type { GitHubRepo } from '../adapters/github/index.js';
import { isTransient, lackingPermission } from '../adapters/github/errors.js';
import type { Trigger } from '../core/epic/index.js';
import { renderErrorComment, renderResolvedError } from '../core/epic/error-comments.js';
import { echoBlock, renderViolationsComment } from '../core/epic/index.js';
import { ERROR_MARKER, VIOLATIONS_MARKER, withoutMarker } from '../core/epic/markers.js';
import type { EpicflowError } from '../core/errors.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import type { Violation } from '../core/plan/index.js';
import type { SettledDeps } from './settings.js';

/**
 * A decision that failed for a reason someone has to fix gets one comment on the
 * epic, edited in place when it fails again (a redelivery adds nothing). A failure
 * GitHub may get over by itself (5xx, rate limits) or a bug is only logged by the
 * caller. When the comment cannot be written either (the App lacks Issues write),
 * that is logged too, once: nothing retries it.
 */
export async function reportFailure(deps: SettledDeps, epic: number, e: unknown): Promise<void> {
  if (!needsSomeone(e)) return;
  try {
    await deps.repo.ensureComment({
      issueNumber: epic,
      marker: ERROR_MARKER,
      body: renderErrorComment({ problem: describeError(e), permission: lackingPermission(e) }),
    });
  } catch (failure) {
    deps.log?.warn(
      `epic #${epic}: cannot comment on the issue why epicflow stopped: ${describeError(failure)}`,
    );
  }
}

/** GitHub refused something, a project or record is missing or wrong: a person can fix it. */
function needsSomeone(e: unknown): e is EpicflowError {
  const tagged =
    isEpicflowError(e, 'github') || isEpicflowError(e, 'config') || isEpicflowError(e, 'state');
  return tagged && !isTransient(e);
}

/**
 * The epic goes on: strike through the comment saying why it had stopped. Checked
 * on what people do (commands, edits), not on every finished job, so the common
 * decision costs no comment lookup; the comment asks for `/resume` anyway.
 */
export async function clearProblem(
  deps: SettledDeps,
  epic: number,
  trigger: Trigger,
): Promise<void> {
  if (trigger.kind === 'workflow_run' || trigger.kind === 'label') return;
  const resolved = renderResolvedError();
  try {
    const existing = await deps.repo.findComment(epic, ERROR_MARKER);
    if (existing === null || existing.body.startsWith(resolved)) return;
    await deps.repo.ensureComment({ issueNumber: epic, marker: ERROR_MARKER, body: resolved });
  } catch (e) {
    // The decision is applied; an outdated note is no reason to fail it.
    deps.log?.warn(`epic #${epic}: cannot mark the stop comment resolved: ${describeError(e)}`);
  }
}

/** Characters of a configuration problem quoted (a huge file must not make the comment too long). */
const CONFIG_PROBLEM_MAX = 8_000;

/** The configuration is not valid: the epic's error comment says so, and why. */
export async function commentInvalidConfig(
  repo: GitHubRepo,
  epic: number,
  e: EpicflowError | undefined,
): Promise<void> {
  const text = e === undefined ? 'the configuration could not be read' : describeError(e);
  await repo.ensureComment({
    issueNumber: epic,
    marker: ERROR_MARKER,
    body: [
      '**epicflow cannot start: its configuration is not valid.** Nothing was created. Fix the file on the default branch, then edit this issue or comment `/resume`.',
      '',
      echoBlock(text, CONFIG_PROBLEM_MAX),
    ].join('\n'),
  });
}

/** The plan is not valid: the violations comment lists what is wrong. */
export async function commentViolations(
  repo: GitHubRepo,
  epic: number,
  violations: readonly Violation[],
): Promise<void> {
  const { marker, body } = renderViolationsComment(violations);
  await repo.ensureComment({ issueNumber: epic, marker, body: withoutMarker(body, marker) });
}

/** A fixed plan: say so in the violations comment, if one was written. */
export async function clearViolations(repo: GitHubRepo, epic: number): Promise<void> {
  const existing = await repo.findComment(epic, VIOLATIONS_MARKER);
  if (existing === null) return;
  await repo.ensureComment({
    issueNumber: epic,
    marker: VIOLATIONS_MARKER,
    body: '~~The plan of this epic was not valid.~~ It is valid now.',
  });
}
