/**
 * Texts a story's outcome is told in: reasons, notes and events read by people
 * and asserted by tests, so each one is built in one place.
 */
import type { GateRun, GateVerdict } from '../gates/index.js';
import type { ScopedCommand } from '../packages.js';
import { capText } from '../report/escape.js';

/** The reason of a story stopped by SIGINT/SIGTERM; a rerun continues it. */
export const INTERRUPTED = 'interrupted; rerun to continue';

/** The reason of a story whose Actions job was cancelled while it ran; `/resume` continues it. */
export const CANCELLED = 'its job was cancelled; /resume continues it from what was committed';

/** `1 revision`, `2 revisions`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A process detail in one line: its first line and its `last` last lines of output. */
export function shortDetail(detail: string, last = 3): string {
  const lines = detail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length === 0) return 'no detail';
  return [lines[0], ...lines.slice(1).slice(-last)].join(' | ');
}

/**
 * What a run says when a gate fails on the base already, with the first line that says why
 * (its first failure, else its last line): stories are not charged with it, so where the
 * gate cannot run at all (a missing tool or module) it checks nothing until that is fixed.
 */
export function redOnBaseNote(run: GateRun, sha: string): string {
  const lines = run.output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const first =
    run.timedOut === true ? 'timed out' : (run.failures?.[0] ?? lines.at(-1) ?? 'failed');
  // Without a runner's rules around it (`____ ERROR collecting x.py ____`).
  const why = first.replace(/^[\s_=!*-]+|[\s_=!*-]+$/g, '') || first;
  return `the gate \`${run.command}\` fails on the base ${sha.slice(0, 12)} already (${capText(why, 200)}): stories are charged only with failures of their own, and where it cannot run at all it checks nothing until that is fixed`;
}

/** The new failures of each failing gate, `lines` failure lines each. */
export function describeVerdicts(verdicts: readonly GateVerdict[], lines = 3): string {
  return verdicts
    .filter((v) => v.status === 'new')
    .map((v) => `${v.command}: ${v.newLines.slice(0, lines).join('; ') || 'failed'}`)
    .join(' | ');
}

/** Why a checked branch may not merge yet ('' when nothing blocks): new gate failures, weakened tests. */
export function blockingReason(check: {
  readonly verdicts: readonly GateVerdict[];
  readonly oracle: readonly string[];
}): string {
  return [describeVerdicts(check.verdicts), check.oracle.join('; ')]
    .filter((p) => p !== '')
    .join(' | ');
}

/** A setup that failed: its output, and the command with the folder it ran in (`.`: the root). */
export interface FailedSetup {
  readonly output: string;
  readonly setup: Pick<ScopedCommand, 'dir' | 'command'>;
}

/**
 * Why setup stopped a story (or a merge): a package's setup is named with its package's
 * folder and its command, the root's is not; then the last `lines` lines of its output.
 */
export function setupFailedReason(failure: FailedSetup, repaired = false, lines = 5): string {
  const { dir, command } = failure.setup;
  const what =
    dir === '.' ? 'setup failed' : `setup of package ${dir} failed (${command}, in ${dir})`;
  const tail = failure.output.trim().split('\n').slice(-lines).join(' | ');
  return `${what}${repaired ? ' after a repair turn' : ''}: ${tail}`;
}

/**
 * After setup ran in a story's tree: go on; give one coder turn to repair it (with
 * `setupRepair`, once); or fail the story.
 */
export function decideAfterSetup(facts: {
  readonly failed: boolean;
  readonly setupRepair: boolean;
  /** A repair turn already ran this attempt. */
  readonly repaired: boolean;
}): 'go' | 'repair' | 'fail' {
  if (!facts.failed) return 'go';
  return facts.setupRepair && !facts.repaired ? 'repair' : 'fail';
}

/**
 * The note for a repository nested in a tree (a folder holding `.git`): its folder is
 * left out of every commit, never recorded as a gitlink and never entered.
 */
export function nestedLeftOut(folder: string): string {
  return `left out ${folder}: a repository nested in the tree (its own .git); epicflow never commits one — remove its .git to commit its files`;
}
