export type { EpicflowConfig } from './types.js';
export { DEFAULT_CONFIG, parseConfig } from './schema.js';
export { referencedVariables } from './env.js';
export { coderSlots, requireCoder, requirePlanner } from './coders.js';
