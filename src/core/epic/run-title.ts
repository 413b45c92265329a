/**
 * Which story a workflow run belongs to, read from its title. A `workflow_run`
 * webhook carries no dispatch inputs, but it carries the run's evaluated
 * `run-name` as `display_title`; the story workflow names each run after the
 * ids it was dispatched with, so the run tells its job without any lookup.
 * The title's grammar and the job it names are `JobRef`'s (job-ref.ts).
 */
import { jobIds, jobTitle, parseJobTitle, type JobIds } from './job-ref.js';

export { RUN_NAME_TEMPLATE } from './job-ref.js';

/** The ids of a story's or a landing's run. */
type RunRef = JobIds;

/** The title GitHub gives a run dispatched with these ids under `RUN_NAME_TEMPLATE`. */
export function runTitle(ref: RunRef): string {
  return jobTitle(ref);
}

/**
 * The ids in a story's or a landing's run title, or null when the title is not
 * exactly one `runTitle` makes (a planning run's title included: see `parseJobTitle`).
 */
export function parseRunTitle(title: string): RunRef | null {
  const ref = parseJobTitle(title);
  return ref === null || ref.kind === 'plan' ? null : jobIds(ref);
}
