export { DEFAULT_IDENTITY, Git, Worktree, type ChangedPath, type GitIdentity } from './git.js';
export { readMergedStories } from './merged-stories.js';
