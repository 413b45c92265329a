export { DEFAULT_IDENTITY, Git, Worktree, type ChangedPath, type GitIdentity } from './git.js';
export {
  buildLandedMessage,
  buildLandMessage,
  buildMergeMessage,
  EPIC_TRAILER,
  EXECUTOR_TRAILER,
  LAND_TRAILER,
  readMergedStories,
  STORY_TRAILER,
  type MergeMessageInput,
} from './merge-message.js';
