/**
 * jest `setupFilesAfterEnv`: epicflow's child processes in this test file start from a
 * small helper process (process-starter.ts), not from the large jest worker, and the helper
 * ends with the file.
 * `EPICFLOW_TEST_STARTER=worker` starts them from the worker, as before (to compare).
 */
import { afterAll } from '@jest/globals';
import { startProcessesWith } from '../../src/adapters/process/starter.js';
import { endHelper, startFromHelper } from './process-starter.js';

if (process.env['EPICFLOW_TEST_STARTER'] !== 'worker') startProcessesWith(startFromHelper);
// The file's helper ends with the file: the worker runs many files, each with its own.
afterAll(() => endHelper());
