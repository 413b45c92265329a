export { Git } from './git.js';
export { readMergedStories } from './merged-stories.js';
