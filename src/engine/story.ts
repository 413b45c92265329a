/**
 * The story lifecycle, for the epic run and the Action's story job: `story/lifecycle.ts`
 * drives it, `story/turns.ts` runs the coder, judge and verifier turns,
 * `story/checks.ts` the checks and the guards around untrusted code. What to do next
 * is decided by `core/story`.
 */
export { runStory } from './story/lifecycle.js';
export { MAX_HANDOVERS, RATE_LIMIT_BACKOFF_MS } from '../core/story/index.js';
