import type { Outgrown } from '../core/model.js';
import type { GateFailureFeedback } from '../core/prompt/coder-prompt.js';

/** A story stops here with this reason (and keeps its branch); not an error of epicflow. */
export class StoryStop extends Error {
  constructor(
    readonly status: 'failed' | 'waiting',
    readonly reason: string,
    /** Set when the merged epic head failed its gates (the merge undone): the new failures. */
    readonly redMerge?: readonly GateFailureFeedback[],
    /** The story proved too big for one coder (a split may be proposed). */
    readonly outgrown?: Outgrown,
  ) {
    super(reason);
  }
}
