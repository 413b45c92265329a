/**
 * Pure analysis of gate output: how many tests passed, which failure lines are
 * new against the baseline, and the oracle guard (tests deleted, skipped or
 * focused, or fewer tests passing than on the epic base).
 */
export * from './counts.js';
export * from './existing-tests.js';
export * from './oracle.js';
export * from './triage.js';
