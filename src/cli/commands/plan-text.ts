/** The text `plan check` prints, and `plan draft` after a plan it wrote. */
import type { PlanResult } from '../../core/plan/index.js';

/** `valid: N stories in W waves`, or one `<code>: <message>` line per violation. */
export function planCheckText(result: PlanResult): string {
  if (result.ok) {
    return `valid: ${result.plan.stories.length} stories in ${result.plan.waves.length} waves\n`;
  }
  return result.violations.map((v) => `${v.code}: ${oneLine(v.message)}\n`).join('');
}

/** Keeps one violation on one line even if a message quotes raw input. */
function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}
