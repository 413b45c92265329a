/**
 * A story's work survives its work job. The runner can be lost, or the job cancelled, after
 * the coder's turn was paid for and committed: each commit the story reaches, and each task
 * of a task plan ticked, writes the story's result anew (its record, with the `progress`
 * and ticks, and the story branch as it stands) into the folder the workflow uploads even
 * when the job failed or was cancelled. The publish job then pushes the branch and writes
 * the record, so the next attempt checks that work first instead of paying for the turn
 * again, and continues at its first unchecked task. A hand-over that cannot be written is
 * said in the job's log and costs nothing else: the job's own end writes everything.
 */
import { describeError } from '../../core/errors.js';
import type { StoryRecord } from '../../core/model.js';
import type { StateStore } from '../../engine/ports.js';

interface HandOverOptions {
  readonly story: string;
  /** Writes the result with this record (and the story branch as it stands). */
  readonly write: (record: StoryRecord) => Promise<void>;
  readonly warn: (message: string) => void;
}

/** The tasks of a task plan ticked so far. */
function ticks(record: StoryRecord): number {
  return (record.tasks ?? []).filter((t) => t.done).length;
}

/** `scratch`, with each new commit or tick of the story's progress also handed over. */
export function progressHandedOver(scratch: StateStore, options: HandOverOptions): StateStore {
  const { story, write, warn } = options;
  let commit: string | undefined;
  // The ticks the record had when this job first wrote it (a resumed plan has some).
  let ticked: number | undefined;
  return {
    dir: scratch.dir,
    readStory: (id) => scratch.readStory(id),
    listStories: () => scratch.listStories(),
    readJson: <T>(name: string) => scratch.readJson<T>(name),
    writeJson: (name, value) => scratch.writeJson(name, value),
    writeText: (name, text) => scratch.writeText(name, text),
    async writeStory(record) {
      await scratch.writeStory(record);
      if (record.story !== story) return;
      const at = record.progress?.commit;
      ticked ??= ticks(record);
      const moved = at !== undefined && at !== commit;
      if (!moved && ticks(record) <= ticked) return;
      commit = at;
      ticked = ticks(record);
      try {
        await write(record);
      } catch (e) {
        warn(`could not hand over the progress of ${story}: ${describeError(e)}`);
      }
    },
  };
}
