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
import { stopsGates, triageGate, type GateRun, type GateVerdict } from '../core/gates/index.js';
import type { CheckScope } from '../core/packages.js';
import type { EpicContext, OutputLog } from './context.js';

export interface SettledGates {
  /** The gates that ran, in order: up to the first that failed with lines of its own. */
  readonly runs: GateRun[];
  readonly verdicts: GateVerdict[];
  /** One line for each gate that was flaky or unstable on the base, for the story's notes. */
  readonly notes: string[];
}

/**
 * Runs the gates one after another in `cwd` and settles each against the baseline, stopping
 * at the first that stays red with failures of its own (`stopsGates`): the ones after it are
 * not run. Each gate's runs (the first, the rerun, the base's again) go to its own log
 * through `withLog`.
 */
export async function settleGates(
  ctx: EpicContext,
  input: {
    /** The tree the gates run in. */
    readonly cwd: string;
    readonly story: string;
    /** Whose gates run (the root's and some packages'); default the merged tree's. */
    readonly scope?: CheckScope;
    readonly baseline: readonly GateRun[];
    /** Runs `work` with the log of gate `index` (its own file, or one shared log). */
    readonly withLog: <T>(
      index: number,
      work: (log: OutputLog | undefined) => Promise<T>,
    ) => Promise<T>;
    /** Gate `index` once more on the base: the baseline with it combined. */
    readonly againOnBase: (
      index: number,
      log: OutputLog | undefined,
    ) => Promise<readonly GateRun[]>;
  },
): Promise<SettledGates> {
  const runs: GateRun[] = [];
  const verdicts: GateVerdict[] = [];
  const notes: string[] = [];
  let baseline = input.baseline;
  for (const [i, gate] of (input.scope ?? ctx.scope).gates.entries()) {
    const command = gate.label;
    const verdict = await input.withLog(i, async (log) => {
      const first = await ctx.runScoped(gate, input.cwd, log, input.story);
      runs[i] = first;
      verdicts[i] = triageGate(first, baseline[i]);
      if (verdicts[i]?.status !== 'new' || ctx.interrupt.signal.aborted) return verdicts[i];
      const again = await ctx.runScoped(gate, input.cwd, log, input.story);
      runs[i] = again;
      verdicts[i] = triageGate(again, baseline[i]);
      if (verdicts[i]?.status !== 'new') {
        notes.push(
          `flaky: \`${command}\` failed with new lines, then ${again.ok ? 'passed' : 'showed only the base’s failures'} on a rerun`,
        );
        return verdicts[i];
      }
      const base = baseline[i];
      if (base === undefined || base.ok || base.combined === true || ctx.interrupt.signal.aborted)
        return verdicts[i];
      baseline = await input.againOnBase(i, log);
      verdicts[i] = triageGate(again, baseline[i]);
      if (verdicts[i]?.status !== 'new') {
        notes.push(
          `unstable on the base: \`${command}\` failed differently on two runs of the base; no line new against both`,
        );
      }
      return verdicts[i];
    });
    if (verdict !== undefined && stopsGates(verdict)) break;
  }
  return { runs, verdicts, notes };
}
