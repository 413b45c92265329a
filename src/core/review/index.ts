/** Review rounds: the lenses, the reviewer's prompt and answer, and the findings log. */
export * from './lenses.js';
export * from './prompt.js';
export * from './findings-log.js';
