export { DEFAULT_IDENTITY, Git, Worktree, type ChangedPath, type GitIdentity } from './git.js';
export {
  buildMergeMessage,
  EXECUTOR_TRAILER,
  readMergedStories,
  STORY_TRAILER,
  type MergeMessageInput,
} from './merge-message.js';
