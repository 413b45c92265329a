/** The GitHub orchestration use case: an event in, reconcile actions applied on GitHub. */
export { handleEpicEvent } from './intake.js';
export { applyActions, type ApplyContext, type ApplyResult } from './apply.js';
export { loadConfig, loadPlan, type EpicState, type PlanLoad } from './load.js';
export type { EpicDoc } from '../core/epic/epic-doc.js';
export { withEpicLock } from './lock.js';
export { toEpicEvent } from './webhook.js';
export {
  DEFAULT_STORY_WORKFLOW,
  type EpicEvent,
  type EventIssue,
  type HandleResult,
  type OrchestratorDeps,
  type OrchestratorLog,
  type Sender,
} from './types.js';
