/**
 * Paying once for a judge's verdict and a verifier's answer. Each answer is kept in the
 * story's record with the fingerprint (sha256) of everything the call read: its prompt
 * (the story's text, acceptance criteria and provides, its dependencies' provides, the
 * house rules, the rubric and the answer format), what it looked at beyond the prompt
 * (the whole diff, or the commit whose tree it inspects) and the executor that answered
 * (harness, model, command and arguments). The first call of its role in a later run of
 * the story (a rerun, `/retry`, a resume) over the same fingerprint reuses the answer
 * and says so; any other call, or any change to what it read, asks again.
 *
 * What a verdict means can depend on the config only through what the judge was asked:
 * under `judge.deferNonBlocking` its prompt asks for severities (and a follow-up round's
 * prompt names the deferred findings), so a verdict given without them is never reused
 * with them, nor the other way round.
 */
import { createHash } from 'node:crypto';
import type { ExecutorConfig } from '../config/types.js';
import type { HelperAnswer } from '../model.js';

/** Said and noted on the story when the judge's verdict is reused. */
export const REUSED_VERDICT_NOTE = 'judge round 1: reused the verdict for an unchanged diff';
/** Said and noted on the story when the verifier's answer is reused. */
export const REUSED_VERIFIER_NOTE =
  'BLOCKED_ON verifier: reused the answer for an unchanged claim and branch';

interface HelperCallInput {
  readonly role: 'judge' | 'verifier';
  /** The prompt as first asked (a repair re-ask asks the same, quoting the problem). */
  readonly prompt: string;
  /** What it reads beyond the prompt: the whole diff (the prompt caps it), or a commit. */
  readonly subject: string;
  /** The executor that answers (or would). */
  readonly executor: ExecutorConfig;
}

export function helperFingerprint(input: HelperCallInput): string {
  const e = input.executor;
  return createHash('sha256')
    .update(
      JSON.stringify({
        version: 1,
        role: input.role,
        prompt: input.prompt,
        subject: input.subject,
        executor: {
          id: e.id,
          harness: e.harness,
          model: e.model ?? null,
          command: e.command ?? null,
          args: e.args,
        },
      }),
    )
    .digest('hex');
}

/**
 * The kept answer a call reuses: only for the first call of its role in a run, and only
 * when what it would read now has the kept answer's fingerprint.
 */
export function reusableAnswer<T>(
  kept: HelperAnswer<T> | undefined,
  fingerprint: string | undefined,
  firstCall: boolean,
): HelperAnswer<T> | undefined {
  if (!firstCall || kept === undefined || fingerprint === undefined) return undefined;
  return kept.fingerprint === fingerprint ? kept : undefined;
}
