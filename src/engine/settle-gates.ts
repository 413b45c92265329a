/**
 * A gate that shows new failing lines is asked twice before a story is charged with them:
 *
 * - once more on the same tree: if it then passes, or shows only the base's failures, the
 *   lines were a flaky test's and the story is not charged (the gate is named as flaky);
 * - when it was red on the base too, once more on the base: a base whose failures change
 *   from run to run charges the story only with lines new against both base runs (the gate
 *   is named as unstable on the base).
 *
 * The same for a story's own checks and for the merged tree, so a correct merge is not
 * undone for a base's noise.
 */
import { triageGate, type GateRun, type GateVerdict } from '../core/gates/index.js';
import type { EpicContext, OutputLog } from './context.js';

interface SettledGates {
  readonly runs: GateRun[];
  readonly verdicts: GateVerdict[];
  /** One line for each gate that was flaky or unstable on the base, for the story's notes. */
  readonly notes: string[];
}

export async function settleGates(
  ctx: EpicContext,
  input: {
    /** The tree the runs were made in. */
    readonly cwd: string;
    readonly story: string;
    readonly runs: readonly GateRun[];
    readonly baseline: readonly GateRun[];
    readonly log?: OutputLog | undefined;
    /** Gate `index` once more on the base: the baseline with it combined. */
    readonly againOnBase: (index: number) => Promise<readonly GateRun[]>;
  },
): Promise<SettledGates> {
  const runs = [...input.runs];
  let baseline = input.baseline;
  const verdicts = runs.map((r, i) => triageGate(r, baseline[i]));
  const notes: string[] = [];
  for (let i = 0; i < runs.length; i++) {
    if (verdicts[i]?.status !== 'new' || ctx.interrupt.signal.aborted) continue;
    const first = runs[i] as GateRun;
    const again = await ctx.runGate(first.command, input.cwd, input.log, input.story);
    runs[i] = again;
    verdicts[i] = triageGate(again, baseline[i]);
    if (verdicts[i]?.status !== 'new') {
      notes.push(
        `flaky: \`${first.command}\` failed with new lines, then ${again.ok ? 'passed' : 'showed only the base’s failures'} on a rerun`,
      );
      continue;
    }
    const base = baseline[i];
    if (base === undefined || base.ok || base.combined === true || ctx.interrupt.signal.aborted)
      continue;
    baseline = await input.againOnBase(i);
    verdicts[i] = triageGate(again, baseline[i]);
    if (verdicts[i]?.status !== 'new') {
      notes.push(
        `unstable on the base: \`${first.command}\` failed differently on two runs of the base; no line new against both`,
      );
    }
  }
  return { runs, verdicts: verdicts as GateVerdict[], notes };
}
