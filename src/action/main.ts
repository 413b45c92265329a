/**
 * The Action's entry (action.yml `runs.main`, bundled to `dist/index.js`):
 * runs the action once. The logic lives in `run.ts`, importable without
 * running it.
 */
import { run } from './run.js';

await run();
