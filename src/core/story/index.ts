/** One story's rounds as a pure reducer, and the texts its outcome is told in. */
export * from './lifecycle.js';
export * from './texts.js';
