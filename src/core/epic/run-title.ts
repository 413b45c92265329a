/**
 * Which story a workflow run belongs to, read from its title. A `workflow_run`
 * webhook carries no dispatch inputs, but it carries the run's evaluated
 * `run-name` as `display_title`; the story workflow names each run after the
 * ids it was dispatched with, so the run tells its story without any lookup.
 */
import { ID_PATTERN, MAX_ID_LENGTH } from '../plan/index.js';

export interface RunRef {
  readonly epic: number;
  readonly story: string;
  readonly attempt: number;
}

/** The story workflow's `run-name` as users copy it (epicflow-story.yml in each folder of examples/workflows). */
export const RUN_NAME_TEMPLATE =
  'epicflow epic ${{ inputs.epic }} story ${{ inputs.story }} attempt ${{ inputs.attempt }}';

/** The title GitHub gives a run dispatched with these ids under `RUN_NAME_TEMPLATE`. */
export function runTitle(ref: RunRef): string {
  return `epicflow epic ${ref.epic} story ${ref.story} attempt ${ref.attempt}`;
}

// Numbers as epicflow dispatches them (`String(n)`): no sign, no leading zero.
const TITLE = /^epicflow epic ([1-9]\d*) story (\S+) attempt ([1-9]\d*)$/;

/** The ids in a run title, or null when the title is not exactly one `runTitle` makes. */
export function parseRunTitle(title: string): RunRef | null {
  const m = TITLE.exec(title);
  if (m === null) return null;
  const [, epicText = '', story = '', attemptText = ''] = m;
  const epic = Number(epicText);
  const attempt = Number(attemptText);
  if (!Number.isSafeInteger(epic) || !Number.isSafeInteger(attempt)) return null;
  if (!ID_PATTERN.test(story) || story.length > MAX_ID_LENGTH) return null;
  return { epic, story, attempt };
}
