export * from './prompts.js';
export * from './verdict.js';
