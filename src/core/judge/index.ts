export * from './prompts.js';
export * from './verdict.js';
export * from './reuse.js';
