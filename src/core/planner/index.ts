/** The planner's pure core: prompt, answer, quality checks, round decision, ids kept, the plan section. */
export { readPlannerAnswer } from './answer.js';
export { decideRound, type RoundDecision } from './decide.js';
export { keepStoryIds, type KeptIds } from './ids.js';
export { buildPlannerPrompt, type PlannerPromptInput, type PlannerRepair } from './prompt.js';
export { checkPlanQuality, QUALITY_CODES, type QualityWarning } from './quality.js';
export { renderPlanBlock } from './render.js';
export { readRefineAnswer, refineId, refinePrefix } from './refine.js';
export { outgrownText, readSplitAnswer, splitCandidates, type SplitRequest } from './split.js';
export {
  PLAN_SECTION_END,
  PLAN_SECTION_START,
  proseOf,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
} from './section.js';
export { trimTree } from './tree.js';
