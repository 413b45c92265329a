export * from './blocked.js';
export * from './clean.js';
export * from './coder-prompt.js';
export * from './relations.js';
export * from './land-prompt.js';
export * from './starting-code.js';
