/** epicflow on GitHub: the Octokit factory, the repository port, the board and the state store. */
export { createOctokit, USER_AGENT } from './client.js';
export { GitHubCache } from './cache.js';
export { readEpicView, type EpicView } from './epic-view.js';
export { rateLimitedUntil } from './rate-limit.js';
export { ensureLabel } from './labels.js';
export {
  CONFIG_PATH,
  GitHubRepo,
  type ListedReviewItem,
  type GitHubClient,
  type IssueSummary,
  type WorkflowRunSummary,
} from './repo.js';
export { cellsOf, ProjectBoard } from './board.js';
export { type BoardRead } from './board-read.js';
export { GitHubStateStore, gitBlobSha, STATE_BRANCH } from './state-store.js';
