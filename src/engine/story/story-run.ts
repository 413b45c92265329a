/**
 * A story in its rounds, as the steps of its life cycle (lifecycle.ts, tasks.ts,
 * finish.ts) share it.
 */
import type { ExecutorConfig } from '../../core/config/types.js';
import type { GateRun } from '../../core/gates/index.js';
import type { Story } from '../../core/model.js';
import type { ResumePoint } from '../../core/story/index.js';
import type { WorktreePort } from '../ports.js';
import type { Recorder } from './recorder.js';
import type { TurnCounter } from './turns.js';

/** A story in its rounds: its tree at the epic base it caught up with, gated against `baseline`. */
export interface StoryRun {
  readonly story: Story;
  readonly branch: string;
  /** The story's tree: checked out anew (`fresh`) when another coder takes over. */
  tree: WorktreePort;
  readonly rec: Recorder;
  /** The epic head the tree caught up with (a merge revision catches up again). */
  base: string;
  baseline: readonly GateRun[];
  /** The coder it starts with, the last of `chain`. */
  readonly executor: ExecutorConfig;
  readonly chain: readonly string[];
  /** Where the rounds start: a coder turn, or the work an interrupted attempt committed. */
  readonly resume: ResumePoint;
  /** The story's turn numbers (a setup repair turn comes first). */
  readonly turn: TurnCounter;
  /** The story's tree checked out anew from its branch, with setup run there again. */
  readonly fresh: () => Promise<WorktreePort>;
}
