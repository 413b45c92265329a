/** The planner's pure core: prompt, answer, quality checks, round decision, ids kept, the plan section. */
export { readPlannerAnswer, type PlannerAnswer } from './answer.js';
export { decideRound, type RoundDecision, type RoundFindings } from './decide.js';
export { keepStoryIds, type KeptIds } from './ids.js';
export {
  buildPlannerPrompt,
  EPIC_TEXT_MAX_BYTES,
  GUIDANCE_MAX_BYTES,
  PLAN_RULES,
  QUALITY_RULES,
  type PlannerExecutorInfo,
  type PlannerLimits,
  type PlannerPromptInput,
  type PlannerRepair,
} from './prompt.js';
export {
  BROAD_OWNS_MIN_FILES,
  BROAD_OWNS_SHARE,
  checkPlanQuality,
  MUST_FIX_CODES,
  NO_PARALLELISM_MIN_STORIES,
  QUALITY_CODES,
  type QualityCode,
  type QualityOptions,
  type QualityWarning,
} from './quality.js';
export { planYaml, renderPlanBlock } from './render.js';
export {
  combineRefinement,
  readRefineAnswer,
  refineId,
  refinePrefix,
  type RefineAnswer,
} from './refine.js';
export {
  PLAN_SECTION_END,
  PLAN_SECTION_START,
  proseOf,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
  type PlanSectionInput,
  type SplitSection,
} from './section.js';
export { TREE_BUDGET_CHARS, trimTree } from './tree.js';
