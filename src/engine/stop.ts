/** A story stops here with this reason (and keeps its branch); not an error of epicflow. */
export class StoryStop extends Error {
  constructor(
    readonly status: 'failed' | 'waiting',
    readonly reason: string,
  ) {
    super(reason);
  }
}
