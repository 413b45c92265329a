/** One story's rounds and its judge and verifier calls as pure reducers, and the texts its outcome is told in. */
export * from './helper.js';
export * from './checked.js';
export * from './lifecycle.js';
export * from './review.js';
export * from './rounds.js';
export * from './logs.js';
export * from './resume.js';
export * from './texts.js';
export * from './transient.js';
export * from './claims.js';
export * from './issue-requests.js';
export * from './tasks.js';
