export type {
  EpicflowConfig,
  ExecutorConfig,
  Harness,
  ModelPrice,
  PlannerConfig,
  PromptConfig,
  Role,
  StartingCodeLimits,
} from './types.js';
export { HARNESSES } from './types.js';
export {
  DEFAULT_CONFIG,
  EpicflowConfigSchema,
  collectSecrets,
  parseConfig,
  resolveEnv,
  validateConfig,
} from './schema.js';
export { durationToMs } from './duration.js';
export { isGithubTokenName, looksLikeRawSecret, referencedVariables } from './env.js';
export {
  configJsonSchema,
  renderConfigReference,
  renderJsonSchema,
  updateConfigDocs,
} from './json-schema.js';
export { coderSlots, requireCoder, requirePlanner } from './coders.js';
