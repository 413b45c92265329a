export { extractPlanBlocks } from './extract.js';
export { canonicalJson, readBackAsWritten, samePlanEntries, storyHash } from './hash.js';
export { planOptionsFor } from './options.js';
export { assemblePlan, parsePlan, parseStoryBlock } from './parse.js';
export {
  ID_PATTERN,
  MAX_ID_LENGTH,
  VIOLATION_CODES,
  type PlanOptions,
  type PlanResult,
  type Violation,
  type ViolationCode,
} from './types.js';
export { buildPlan, MAX_REPORTS_PER_CODE } from './validate.js';
export { computeWaves } from './waves.js';
export { splitId, splitStory } from './split.js';
