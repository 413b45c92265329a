/** epicflow on GitHub: the Octokit factory, the repository port, the board and the state store. */
export { createOctokit, USER_AGENT, type CreateOctokitOptions, type OctokitLog } from './client.js';
export { BoundedMap, GitHubCache } from './cache.js';
export { readEpicView, type EpicView, type HeadCommit } from './epic-view.js';
export { githubError, type AppPermission } from './errors.js';
export { rateLimitedUntil } from './rate-limit.js';
export { ensureLabel, type LabelSpec } from './labels.js';
export {
  CONFIG_PATH,
  DISPATCH_INPUT,
  GitHubRepo,
  type DispatchResult,
  type EnsureAction,
  type EnsurePrResult,
  type ListedReviewItem,
  type GitHubClient,
  type GitHubRepoOptions,
  type IssueSummary,
  type WorkflowRunSummary,
} from './repo.js';
export { BOARD_FIELDS, cellsOf, ProjectBoard, type BoardCells } from './board.js';
export { parseProjectUrl, type BoardRead, type ProjectRef } from './board-read.js';
export {
  GitHubStateStore,
  gitBlobSha,
  STATE_BRANCH,
  type GitHubStateStoreOptions,
  type WriteResult,
} from './state-store.js';
