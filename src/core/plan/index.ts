export { extractPlanBlocks } from './extract.js';
export type { PlanBlock } from './extract.js';
export { canonicalJson, samePlanEntries, storyHash } from './hash.js';
export { planOptionsFor } from './options.js';
export { assemblePlan, parsePlan, parseStoryBlock } from './parse.js';
export { StoryEntry } from './schema.js';
export {
  ID_PATTERN,
  MAX_ID_LENGTH,
  MAX_STORIES,
  VIOLATION_CODES,
  type PlanOptions,
  type PlanResult,
  type StoryResult,
  type Violation,
  type ViolationCode,
} from './types.js';
export {
  buildPlan,
  findCycles,
  MAX_REPORTS_PER_CODE,
  validateStories,
  validateStory,
} from './validate.js';
export type { Locate, ValidateOptions } from './validate.js';
export { computeWaves } from './waves.js';
