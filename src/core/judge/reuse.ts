/**
 * Paying once for a judge's verdict, a verifier's answer and each review lens's answer.
 * Each answer is kept in the
 * story's record sealed with an HMAC-SHA256 (under the repository's answer key, which the
 * agent cannot read) of the answer, the executor that gave it and everything the call read: its prompt
 * (the story's text, acceptance criteria and provides, its dependencies' provides, the
 * house rules, the rubric and the answer format), what it looked at beyond the prompt
 * (the whole diff, or the commit whose tree it inspects) and the executor that answered
 * (harness, model, command and arguments). The first call of its role in a later run of
 * the story (a rerun, `/retry`, a resume) over the same fingerprint reuses the answer
 * and says so; any other call, or any change to what it read, asks again. A lens's answer
 * is reused by any of its calls, in this run or a later one, whose diff, lens and prompt
 * (without the round's own parts: its number, the lens's earlier findings) are the same.
 *
 * What a verdict means can depend on the config only through what the judge was asked:
 * under `judge.deferNonBlocking` its prompt asks for severities (and a follow-up round's
 * prompt names the deferred findings), so a verdict given without them is never reused
 * with them, nor the other way round.
 *
 * The seal is what makes a kept answer worth reusing: a record the agent rewrote (a
 * verdict it wrote itself, an answer moved from another diff) has no valid seal without
 * the key, and is a miss, so the call is asked again. Locally the key is a file of
 * epicflow's state folder, mode 0600, made once per repository; in the Action the
 * records live on the state branch, written only with the job's write credential, and
 * the key is the public `ACTION_ANSWER_KEY`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ExecutorConfig } from '../config/types.js';
import type { HelperAnswer } from '../model.js';

/** Said and noted on the story when the judge's verdict is reused. */
export const REUSED_VERDICT_NOTE = 'judge round 1: reused the verdict for an unchanged diff';
/** Said and noted on the story when review lenses' answers are reused. */
export function reusedLensesNote(round: number, lenses: readonly string[]): string {
  return `review round ${round}: reused the answer of ${lenses.length === 1 ? 'the' : 'each'} ${lenses.join(', ')} lens for an unchanged diff`;
}
/** Said and noted on the story when the verifier's answer is reused. */
export const REUSED_VERIFIER_NOTE =
  'BLOCKED_ON verifier: reused the answer for an unchanged claim and branch';

interface HelperCallInput {
  readonly role: 'judge' | 'verifier' | 'reviewer';
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

/** The key of the Action's kept answers: its records are guarded by the write credential. */
export const ACTION_ANSWER_KEY = new TextEncoder().encode('epicflow: answers on the state branch');

/** The seal kept with an answer: HMAC-SHA256 under `key` of what was read, who answered and what. */
function seal(key: Uint8Array, fingerprint: string, executor: string, answer: unknown): string {
  return createHmac('sha256', key)
    .update(JSON.stringify({ version: 2, fingerprint, executor, answer }))
    .digest('hex');
}

/** An answer to keep in the record: sealed with the key, over the fingerprint of what it read. */
export function keepAnswer<T>(
  key: Uint8Array,
  fingerprint: string,
  executor: string,
  answer: T,
): HelperAnswer<T> {
  return { fingerprint: seal(key, fingerprint, executor, answer), executor, answer };
}

/**
 * The kept answer a call reuses: only for the first call of its role in a run, and only
 * when its seal is the one `key` gives what the call would read now with that answer
 * (a forged or moved answer, or one kept under another key, is a miss).
 */
export function reusableAnswer<T>(
  key: Uint8Array,
  kept: HelperAnswer<T> | undefined,
  fingerprint: string | undefined,
  firstCall: boolean,
): HelperAnswer<T> | undefined {
  if (!firstCall || kept === undefined || fingerprint === undefined) return undefined;
  const want = Buffer.from(seal(key, fingerprint, kept.executor, kept.answer), 'hex');
  const have = Buffer.from(kept.fingerprint, 'hex');
  return have.length === want.length && timingSafeEqual(have, want) ? kept : undefined;
}
