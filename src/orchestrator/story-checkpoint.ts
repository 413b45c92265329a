/**
 * A story job's work survives the job. The runner can be lost, or the job cancelled hard,
 * after the coder's turn was paid for and committed: each commit the story reaches goes to
 * its branch on GitHub as it is made, and the first one of the job is written to the
 * story's record there (its `progress`), so the next attempt checks that work first
 * instead of paying for the turn again. A story run as a task plan also writes its record
 * at each tick (with the branch pushed where the tick is), so the next attempt continues at
 * its first unchecked task. A checkpoint that cannot be written is said in the job's log
 * and costs nothing else: the job's own end still pushes and records everything.
 */
import type { GitHubStateStore } from '../adapters/github/index.js';
import type { PushResult } from '../adapters/git/remote-git.js';
import { describeError } from '../core/errors.js';
import type { StoryRecord } from '../core/model.js';
import type { StateStore } from '../engine/ports.js';

export interface StoryOnGitHub {
  /** The story branch's head on GitHub, as this job found or pushed it (null: none). */
  head: string | null;
  /** The blob sha of the story's record on GitHub as this job last wrote or read it. */
  recordSha: string;
}

interface CheckpointOptions {
  readonly story: string;
  readonly branch: string;
  /** Pushes a commit to the story branch with a lease on `expected`. */
  readonly push: (sha: string, expected: string | null) => Promise<PushResult>;
  readonly store: GitHubStateStore;
  /** Updated as checkpoints are written: the job's end pushes and writes against it. */
  readonly onGitHub: StoryOnGitHub;
  readonly warn: (message: string) => void;
}

/** The tasks of a task plan ticked so far. */
function ticks(record: StoryRecord): number {
  return (record.tasks ?? []).filter((t) => t.done).length;
}

/** `scratch`, with each new commit of the story's progress also published to GitHub. */
export function checkpointing(scratch: StateStore, options: CheckpointOptions): StateStore {
  const { story, branch, push, store, onGitHub, warn } = options;
  let recorded = false;
  // The ticks the record had when this job first wrote it (a resumed plan has some).
  let ticked: number | undefined;
  const publish = async (record: StoryRecord, commit: string | undefined): Promise<void> => {
    if (commit !== undefined && commit !== onGitHub.head) {
      const pushed = await push(commit, onGitHub.head);
      if (!pushed.ok) {
        warn(`could not push ${branch} at ${commit.slice(0, 12)} yet: ${pushed.reason}`);
        return;
      }
      onGitHub.head = commit;
    }
    // One record write a job, and one a task ticked: a later attempt checks the branch as
    // it is anyway, and continues at the first unchecked task.
    const tick = ticks(record) > (ticked ?? 0);
    if (recorded && !tick) return;
    recorded = true;
    ticked = ticks(record);
    const wrote = await store.write(record, onGitHub.recordSha);
    if (wrote.ok) onGitHub.recordSha = wrote.sha;
    else warn(`the record of ${story} changed on GitHub meanwhile: its progress is not written`);
  };
  return {
    dir: scratch.dir,
    readStory: (id) => scratch.readStory(id),
    listStories: () => scratch.listStories(),
    readJson: <T>(name: string) => scratch.readJson<T>(name),
    writeJson: (name, value) => scratch.writeJson(name, value),
    writeText: (name, text) => scratch.writeText(name, text),
    async writeStory(record) {
      await scratch.writeStory(record);
      const commit = record.progress?.commit;
      if (record.story !== story) return;
      ticked ??= ticks(record);
      const moved = commit !== undefined && commit !== onGitHub.head;
      if (!moved && ticks(record) <= ticked) return;
      try {
        await publish(record, commit);
      } catch (e) {
        warn(`could not publish the progress of ${story}: ${describeError(e)}`);
      }
    },
  };
}
