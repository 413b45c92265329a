/**
 * The planner's answer: the LAST ` ```epicflow ` block of its final message
 * (for the `command` harness, of its standard output), checked by the plan
 * validator exactly as a hand-written plan is. Earlier blocks (drafts, quoted
 * examples) do not count.
 */
import { fenceBlock } from '../epic/sanitize.js';
import { extractPlanBlocks } from '../plan/extract.js';
import { parsePlan } from '../plan/parse.js';
import type { PlanOptions, PlanResult } from '../plan/types.js';

export interface PlannerAnswer {
  /** The YAML of the last block; undefined when the message has none. */
  readonly yaml?: string;
  /**
   * The validator's result on that block alone. Line numbers count the block's
   * lines with its opening fence as line 1.
   */
  readonly result: PlanResult;
}

export function readPlannerAnswer(finalMessage: string, options: PlanOptions): PlannerAnswer {
  const last = extractPlanBlocks(finalMessage).at(-1);
  if (last === undefined) {
    const result = parsePlan('', options);
    if (result.ok) return { result };
    return {
      result: {
        ...result,
        violations: result.violations.map((v) =>
          v.code === 'no-plan-block'
            ? {
                ...v,
                message:
                  'your final message has no ```epicflow block: end it with the whole plan in one fenced block whose info string is epicflow',
              }
            : v,
        ),
      },
    };
  }
  return { yaml: last.content, result: parsePlan(fenceBlock(last.content, 'epicflow'), options) };
}
